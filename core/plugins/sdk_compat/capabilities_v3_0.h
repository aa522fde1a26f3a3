// Asking a plugin built against SDK 3.0 for its capabilities.
#pragma once

#include "plugtrain/backend.h"

namespace plugtrain::sdk_compat {

// Calls capabilities() on a plugin whose handshake says SDK 3.0 through the 3.0 table and the
// 3.0 struct, and returns today's Capabilities: the fields its SDK did not have keep their
// defaults. Calling it with today's types instead makes the plugin construct a smaller struct
// than the host then reads and destroys. What the plugin throws goes through.
Capabilities capabilities_of_3_0_plugin(const Backend& plugin);

}  // namespace plugtrain::sdk_compat
