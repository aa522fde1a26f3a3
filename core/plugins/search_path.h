// Where the host looks for plugins, in a fixed order (first match of a name wins):
//   1. paths given explicitly (command line --plugin-path, then the experiment's list)
//   2. PLUGTRAIN_PLUGIN_PATH, ':'-separated
//   3. <executable dir>/../lib/plugtrain/plugins (same in the build and install trees)
// Never the working directory. Inside a folder, files are taken in byte order of their names.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace plugtrain {

struct SearchRoot {
  std::filesystem::path path;
  std::string origin;  // "--plugin-path", "experiment", "PLUGTRAIN_PLUGIN_PATH", "beside executable"
  bool exists = false;
};

struct PluginCandidate {
  std::filesystem::path path;
  std::string origin;
};

struct SearchOptions {
  std::vector<std::filesystem::path> cli_paths;
  std::vector<std::filesystem::path> experiment_paths;
  bool use_environment = true;  // read PLUGTRAIN_PLUGIN_PATH
  bool use_default = true;      // the folder beside the executable
};

std::filesystem::path default_plugin_dir();
std::vector<SearchRoot> plugin_search_roots(const SearchOptions& options);
// Files that may be plugins (shared libraries) under the roots, in search order.
std::vector<PluginCandidate> find_plugin_candidates(const std::vector<SearchRoot>& roots);

}  // namespace plugtrain
