// Search order: command line, experiment, PLUGTRAIN_PLUGIN_PATH, beside the executable;
// never the working directory (nor a relative path from the environment or an experiment);
// files in a folder in name order.
// ctest-label: unit
// ctest-label SearchPathCli: e2e
#include <cstdlib>
#include <fstream>

#include <unistd.h>

#include <gtest/gtest.h>

#include "plugins/search_path.h"
#include "support/run_process.h"

namespace plugtrain {
namespace search_path_test {

namespace fs = std::filesystem;

TEST(SearchPath, OrderIsCliThenExperimentThenEnvironmentThenDefault) {
  ::setenv("PLUGTRAIN_PLUGIN_PATH", "/env/one::/env/two", 1);
  SearchOptions o;
  o.cli_paths = {"/cli"};
  o.experiment_paths = {"/exp"};
  auto roots = plugin_search_roots(o);
  ::unsetenv("PLUGTRAIN_PLUGIN_PATH");
  ASSERT_EQ(roots.size(), 5u);  // the empty entry between "::" adds nothing
  EXPECT_EQ(roots[0].path, "/cli");
  EXPECT_EQ(roots[0].origin, "--plugin-path");
  EXPECT_EQ(roots[1].path, "/exp");
  EXPECT_EQ(roots[1].origin, "experiment");
  EXPECT_EQ(roots[2].path, "/env/one");
  EXPECT_EQ(roots[3].path, "/env/two");
  EXPECT_EQ(roots[3].origin, "PLUGTRAIN_PLUGIN_PATH");
  EXPECT_EQ(roots[4].origin, "beside executable");
  EXPECT_EQ(roots[4].path.filename(), "plugins");
  for (const auto& r : roots) EXPECT_NE(r.path, fs::current_path()) << "working directory must not be searched";
}

TEST(SearchPath, FolderEntriesInNameOrderAndOnlySharedLibraries) {
  fs::path dir = fs::temp_directory_path() / ("plugtrain-order-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const char* name : {"b.so", "a.so", "c.txt", "a.so.bak"}) std::ofstream(dir / name) << "x";
  auto found = find_plugin_candidates({{dir, "test", true}});
  fs::remove_all(dir);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].path.filename(), "a.so");
  EXPECT_EQ(found[1].path.filename(), "b.so");
}

TEST(SearchPath, SameFileReachedTwiceIsOneCandidate) {
  fs::path dir = fs::temp_directory_path() / ("plugtrain-twice-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "p.so") << "x";
  auto found = find_plugin_candidates({{dir, "one", true}, {dir / "p.so", "two", true}});
  fs::remove_all(dir);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].origin, "one");
}

// PLUGTRAIN_PLUGIN_PATH=. or plugins.paths = ["plugins"] would load whatever lies in the folder a
// command starts in: listed with the reason, never searched. A relative --plugin-path is what this
// command line names, for the folder it runs in.
TEST(SearchPath, RelativeEntriesOfTheEnvironmentAndTheExperimentAreIgnored) {
  const fs::path dir = fs::temp_directory_path() / ("plugtrain-relative-" + std::to_string(::getpid()));
  fs::create_directories(dir / "plugins");
  std::ofstream(dir / "here.so") << "x";
  std::ofstream(dir / "plugins" / "there.so") << "x";
  const fs::path before = fs::current_path();
  fs::current_path(dir);
  ::setenv("PLUGTRAIN_PLUGIN_PATH", ".:plugins", 1);
  SearchOptions o;
  o.experiment_paths = {"plugins", "here.so"};
  o.use_default = false;
  const auto roots = plugin_search_roots(o);
  const auto found = find_plugin_candidates(roots);
  o.cli_paths = {"plugins"};
  const auto with_cli = find_plugin_candidates(plugin_search_roots(o));
  ::unsetenv("PLUGTRAIN_PLUGIN_PATH");
  fs::current_path(before);
  fs::remove_all(dir);

  ASSERT_EQ(roots.size(), 4u);
  for (const auto& r : roots) EXPECT_NE(r.ignored.find("relative path"), std::string::npos) << r.path;
  EXPECT_TRUE(found.empty()) << found[0].path;
  ASSERT_EQ(with_cli.size(), 1u);
  EXPECT_EQ(with_cli[0].path, dir / "plugins" / "there.so");
  EXPECT_EQ(with_cli[0].origin, "--plugin-path");
}

TEST(SearchPath, AFileNamedOnItsOwnIsMarkedNamed) {
  fs::path dir = fs::temp_directory_path() / ("plugtrain-named-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "a.so") << "x";
  std::ofstream(dir / "b.so") << "x";
  auto found = find_plugin_candidates({{dir / "b.so", "file", true}, {dir, "folder", true}});
  fs::remove_all(dir);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].path.filename(), "b.so");
  EXPECT_TRUE(found[0].named);
  EXPECT_EQ(found[1].path.filename(), "a.so");
  EXPECT_FALSE(found[1].named);
}

// An experiment that names a relative plugin folder is refused before anything loads, naming the key.
TEST(SearchPathCli, AnExperimentsRelativePluginPathIsABadInput) {
  const fs::path dir = testing::scratch_dir("relative-key");
  std::ofstream(dir / "exp.toml") << "[plugins]\npaths = [\"plugins\"]\n";
  const auto r = testing::run_process(testing::plugtrain_command("run exp.toml", "", dir));
  fs::remove_all(dir);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("exp.toml:2:9: plugins.paths \"plugins\" is not an absolute path"), std::string::npos) << r.out;
}

}  // namespace search_path_test
}  // namespace plugtrain
