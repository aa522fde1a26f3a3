// A plugin that needs libplugtrain_vanished.so, which the loader cannot find.
#include <torch/version.h>

#include "plugtrain/abi.h"

extern "C" int vanished_answer();

PLUGTRAIN_PLUGIN_INFO(PLUGTRAIN_KIND_BACKEND, "needsvanished", "0.0.1", "depends on a missing library")

extern "C" PLUGTRAIN_EXPORT int use_vanished() { return vanished_answer(); }
