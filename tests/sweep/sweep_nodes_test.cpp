// [sweep] nodes (each trial across several Slurm nodes) refused in one line, exit 2, before
// anything is written: without --slurm, and with a count that is no count of nodes. The trials
// on a real cluster are tested in tests/distributed/multinode_sweep_test.cpp.
// ctest-label: e2e
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "support/run_process.h"
#include "support/temp_dir.h"

namespace plugtrain {
namespace sweep_nodes_test {

namespace fs = std::filesystem;

// Inline, not ExperimentToml: the refusals name exp.toml:12:C, and line 12 holds `nodes_line`.
std::string experiment(const std::string& nodes_line) {
  return "[experiment]\nname = \"wide\"\n[backend]\nname = \"cpu\"\n[model]\nname = \"mlp\"\n"
         "[data]\ndataset = \"synthetic\"\n[train]\nepochs = 1\n[sweep]\n" +
         nodes_line + "\noptim.lr = [0.1, 0.2]\n";
}

class SweepNodesTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::scratch_dir("sweep-nodes"); }
  void TearDown() override { fs::remove_all(dir_); }
  // `plugtrain sweep exp.toml ARGS` with `nodes_line` in its [sweep] table.
  testing::ProcessResult sweep(const std::string& nodes_line, const std::string& args = "") const {
    std::ofstream(dir_ / "exp.toml") << experiment(nodes_line);
    return testing::run_process(testing::plugtrain_command("sweep exp.toml" + args, "", dir_));
  }
  // One line, exit 2, no run folder.
  void expect_refused(const testing::ProcessResult& r, const std::string& line) const {
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_EQ(r.out, "plugtrain: error: " + line + "\n");
    EXPECT_FALSE(fs::exists(dir_ / "runs")) << r.out;
  }
  fs::path dir_;
};

TEST_F(SweepNodesTest, NodesWithoutSlurmIsOneLineNamingTheKeyAndWhy) {
  expect_refused(sweep("nodes = 2"),
                 "exp.toml:12:9: sweep.nodes = 2 trains each trial across Slurm nodes, so it "
                 "needs --slurm (without it every trial runs here as one process)");
  expect_refused(sweep("nodes = 2", " --dry-run"),
                 "exp.toml:12:9: sweep.nodes = 2 trains each trial across Slurm "
                 "nodes, so it needs --slurm (without it every trial runs here as "
                 "one process)");
}

TEST_F(SweepNodesTest, NodesBelowOneOrNotACountAreOneLine) {
  for (const std::string value : {"0", "-1", "\"two\"", "1.5"})
    expect_refused(sweep("nodes = " + value, " --slurm"),
                   "exp.toml:12:9: sweep.nodes must be a positive integer (the Slurm nodes each trial trains across), "
                   "not " +
                       value);
  expect_refused(sweep("tasks_per_node = 2", " --slurm"),
                 "exp.toml:12:18: sweep.tasks_per_node goes with sweep.nodes (the Slurm nodes each trial trains "
                 "across)");
}

}  // namespace sweep_nodes_test
}  // namespace plugtrain
