// Not a plugin: the boundary types of a released SDK minor that no test plugin here is built
// with (3.1, 3.3), as its own headers lay them out (sdk_layout.h).
#include "plugtrain/backend.h"
#include "plugtrain/model.h"
#include "sdk_layout.h"

static_assert(PLUGTRAIN_SDK_ABI_MINOR == TEST_SDK_MINOR, "the released headers must come first on the include path");

PLUGTRAIN_TEST_EXPORT_LAYOUT(PLUGTRAIN_TEST_BACKEND_LAYOUT + PLUGTRAIN_TEST_MODEL_LAYOUT)
