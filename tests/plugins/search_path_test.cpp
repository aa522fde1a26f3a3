// Search order: command line, experiment, PLUGTRAIN_PLUGIN_PATH, beside the executable;
// never the working directory; files in a folder in name order.
// ctest-label: unit
#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

#include "plugins/search_path.h"

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

}  // namespace search_path_test
}  // namespace plugtrain
