// Opening one plugin file: permission checks, dlopen through Boost.DLL, and the plain-C
// handshake. No C++ symbol of the plugin is touched here.
#pragma once

#include <boost/dll/shared_library.hpp>

#include "plugins/plugin_record.h"
#include "plugins/search_path.h"

namespace plugtrain {

struct OpenedPlugin {
  PluginRecord record;                 // status loaded (handshake accepted) or refused
  boost::dll::shared_library library;  // loaded when the file could be loaded at all
};

// A plugin that others could change (plugin_permissions.h) is refused, or with allow_insecure
// loaded with the problem in record.warning.
OpenedPlugin open_plugin(const PluginCandidate& candidate, bool allow_insecure = false);

// Keeps a library mapped for the life of the process: GPU runtimes crash when unloaded,
// and objects created by a plugin must never outlive its code.
void retain_until_exit(boost::dll::shared_library library);

// The host's own handshake values, compared with every plugin's.
std::string host_torch_version();
std::string host_cxx_abi();

}  // namespace plugtrain
