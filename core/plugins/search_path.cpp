#include "plugins/search_path.h"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <system_error>

#include <boost/dll/runtime_symbol_info.hpp>

namespace plugtrain {
namespace fs = std::filesystem;

namespace {

bool looks_like_shared_library(const fs::path& p) {
  const std::string ext = p.extension().string();
#if defined(__APPLE__)
  return ext == ".dylib" || ext == ".so";
#elif defined(_WIN32)
  return ext == ".dll";
#else
  return ext == ".so";
#endif
}

// relative_ok: the command line names it, for the working directory it runs in.
void add_root(std::vector<SearchRoot>& roots, const fs::path& path, const std::string& origin,
              bool relative_ok = false) {
  if (path.empty()) return;
  std::error_code ec;
  // A file or the environment says it once for every working directory it will meet: a relative
  // path there would load whatever lies in the one a command happens to start in.
  if (path.is_relative() && !relative_ok) {
    roots.push_back({path, origin, false, "a relative path would depend on the working directory: write it absolute"});
    return;
  }
  fs::path absolute = fs::absolute(path, ec);
  if (ec) absolute = path;
  roots.push_back({absolute.lexically_normal(), origin, fs::exists(absolute, ec)});
}

}  // namespace

fs::path default_plugin_dir() {
  std::error_code ec;
  fs::path exe = boost::dll::program_location(ec);
  if (ec) return {};
  // <prefix>/bin/plugtrain (the build tree) or <prefix>/lib/plugtrain/plugtrain (an
  // install, started by the bin/plugtrain launcher): both find <prefix>/lib/plugtrain/plugins.
  fs::path dir = exe.parent_path().filename() == "plugtrain" ? exe.parent_path() / "plugins"
                                                             : exe.parent_path().parent_path() / "lib" / "plugtrain" / "plugins";
  fs::path canonical = fs::weakly_canonical(dir, ec);
  return ec ? dir : canonical;
}

std::vector<SearchRoot> plugin_search_roots(const SearchOptions& options) {
  std::vector<SearchRoot> roots;
  for (const auto& p : options.cli_paths) add_root(roots, p, "--plugin-path", true);
  for (const auto& p : options.experiment_paths) add_root(roots, p, "experiment");
  if (options.use_environment) {
    if (const char* env = std::getenv("PLUGTRAIN_PLUGIN_PATH")) {
      std::string value(env);
      std::size_t start = 0;
      while (start <= value.size()) {
        std::size_t end = value.find(':', start);
        if (end == std::string::npos) end = value.size();
        // An empty entry would mean "the working directory" to a shell; here it means nothing.
        add_root(roots, value.substr(start, end - start), "PLUGTRAIN_PLUGIN_PATH");
        start = end + 1;
      }
    }
  }
  if (options.use_default) add_root(roots, default_plugin_dir(), "beside executable");
  return roots;
}

std::vector<PluginCandidate> find_plugin_candidates(const std::vector<SearchRoot>& roots) {
  std::vector<PluginCandidate> out;
  std::set<fs::path> seen;  // the same file reached twice is one candidate
  auto add = [&](const fs::path& p, const std::string& origin, bool named) {
    std::error_code ec;
    fs::path key = fs::weakly_canonical(p, ec);
    if (ec) key = p;
    if (seen.insert(key).second) out.push_back({p, origin, named});
  };
  for (const auto& root : roots) {
    if (!root.ignored.empty()) continue;
    std::error_code ec;
    if (fs::is_regular_file(root.path, ec)) {
      add(root.path, root.origin, true);  // an explicitly named file is tried whatever its suffix
      continue;
    }
    if (!fs::is_directory(root.path, ec)) continue;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(root.path, ec)) {
      std::error_code type_ec;
      if (entry.is_regular_file(type_ec) && looks_like_shared_library(entry.path()))
        files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) add(f, root.origin, false);
  }
  return out;
}

}  // namespace plugtrain
