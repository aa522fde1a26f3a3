// Where the host looks for plugins, in a fixed order (first match of a name wins):
//   1. paths given explicitly (command line --plugin-path, then the experiment's list)
//   2. PLUGTRAIN_PLUGIN_PATH, ':'-separated
//   3. <executable dir>/../lib/plugtrain/plugins (same in the build and install trees)
// Never the working directory, and nothing relative to it but what this command line names: a
// relative entry of PLUGTRAIN_PLUGIN_PATH or of the experiment's plugins.paths is listed, ignored,
// with the reason. Inside a folder, files are taken in byte order of their names.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "plugins/plugin_permissions.h"

namespace plugtrain {

struct SearchRoot {
  std::filesystem::path path;
  std::string origin;  // "--plugin-path", "experiment", "PLUGTRAIN_PLUGIN_PATH", "beside executable"
  bool exists = false;
  std::string ignored;  // why it is not searched (a relative path from a file or the environment); "" if it is
};

struct PluginCandidate {
  std::filesystem::path path;
  std::string origin;
  bool named = false;  // the entry named this file (not a folder searched)
};

struct SearchOptions {
  std::vector<std::filesystem::path> cli_paths;
  std::vector<std::filesystem::path> experiment_paths;
  bool use_environment = true;  // read PLUGTRAIN_PLUGIN_PATH
  bool use_default = true;      // the folder beside the executable
  // Load a plugin that others could change (plugin_permissions.h) with a warning instead of refusing it.
  bool allow_insecure = insecure_plugins_allowed();
};

std::filesystem::path default_plugin_dir();
std::vector<SearchRoot> plugin_search_roots(const SearchOptions& options);
// Files that may be plugins (shared libraries) under the roots, in search order.
std::vector<PluginCandidate> find_plugin_candidates(const std::vector<SearchRoot>& roots);

}  // namespace plugtrain
