// Sweeps whose trials train across nodes ([sweep] nodes = 2) on the 3-node cluster
// (support/local_slurm_cluster.h): each trial is one array task holding 2 nodes, its ranks
// meeting at the task's first node as `srun plugtrain run` does; and a request for more nodes
// than the cluster has, refused before anything is written.
// ctest-label: slurm
#include <filesystem>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/multinode_jobs.h"

namespace plugtrain {
namespace multinode_sweep_test {

using testing::shell_quote;
using testing::slurp;
namespace fs = std::filesystem;

class MultiNodeSweepTest : public testing::MultiNodeJobTest {
 protected:
  // `plugtrain sweep ARGS` run from the test's folder against the cluster.
  testing::ProcessResult sweep(const std::string& args) const {
    return slurm("env -u PLUGTRAIN_PLUGIN_PATH " + shell_quote(PLUGTRAIN_EXE) + " sweep " + args);
  }
};

// One trial of two nodes beside a plain 2-node job of the same experiment: the trial is an array
// task on 2 nodes (its status says which), trains as ddp of 2 ranks meeting at its first node,
// and ends with bitwise the plain job's weights.
TEST_F(MultiNodeSweepTest, ATrialOfTwoNodesIsAnArrayTaskWithTheWeightsOfAPlainTwoNodeRun) {
  testing::multinode_experiment("swept")
      .set("sweep.optim.lr", {0.05})
      .set("sweep.nodes", 2)
      .write(dir() / "swept.toml");
  testing::multinode_experiment("plain").write(dir() / "plain.toml");
  const fs::path folder = dir() / "runs" / "swept" / "sweep";
  const std::string next_out = shell_quote(folder.string()) + "/slurm/next-*.out";
  // The sweep's own follow-up job says when it is over; the plain job waits for free nodes.
  const testing::ProcessResult r =
      slurm(testing::kJobShellFunctions + "env -u PLUGTRAIN_PLUGIN_PATH " + shell_quote(PLUGTRAIN_EXE) +
            " sweep swept.toml --slurm > submitted.txt 2>&1 || { cat submitted.txt; exit 1; }\n" +
            submit("P", "plain", "-N 2 --ntasks-per-node 1", "plain.toml --set train.threads=1") +
            "for i in $(seq 3000); do grep -q -E 'every trial is done|trial\\(s\\) failed' " + next_out +
            " 2>/dev/null && break; sleep 0.1; done\n"
            "echo \"PLAIN=$(ended $P)\"");
  const std::string submitted = slurp(dir() / "submitted.txt");
  ASSERT_NE(submitted.find("submitted job array"), std::string::npos) << r.out << submitted;
  ASSERT_EQ(value(r.out, "PLAIN"), "COMPLETED") << r.out;
  const std::string trial = "optim.lr=0.05";
  const std::string log = slurp(folder / "logs" / (trial + ".log"));
  const testing::ProcessResult status = sweep("--status runs/swept/sweep --json 2>/dev/null");
  const nlohmann::json j = nlohmann::json::parse(status.out);
  ASSERT_EQ(j["trials"].size(), 1u) << status.out;
  EXPECT_EQ(j["trials"][0]["state"], "finished") << status.out << log;
  // Two of the three nodes, the first of which hosted the rendezvous.
  const std::string nodes = j["trials"][0]["nodes"].is_string() ? j["trials"][0]["nodes"].get<std::string>() : "";
  std::smatch m;
  ASSERT_TRUE(std::regex_match(nodes, m, std::regex("n\\[([1-3])[-,]([1-3])\\]"))) << status.out;
  EXPECT_NE(log.find("ddp: 2 processes (slurm, rendezvous " + node_address(std::stoi(m[1].str())) + ":"),
            std::string::npos)
      << log;
  const auto summary = nlohmann::json::parse(slurp(folder / trial / "version_0" / "summary.json"));
  EXPECT_EQ(summary["plan"]["world_size"], 2) << summary.dump();
  EXPECT_EQ(summary["plan"]["world_source"], "slurm") << summary.dump();
  expect_bitwise_same_checkpoints(folder / trial / "version_0" / "checkpoints" / "last.ckpt", checkpoint("plain"));
}

// More nodes than the cluster has: one line naming the key and the cluster's count, exit 2,
// nothing submitted or written (sbatch would refuse only once the array is submitted).
TEST_F(MultiNodeSweepTest, MoreNodesThanTheClusterHasIsOneLineAndWritesNothing) {
  testing::multinode_experiment("wide").set("sweep.optim.lr", {0.05}).set("sweep.nodes", 4).write(dir() / "wide.toml");
  const testing::ProcessResult r = sweep("wide.toml --slurm");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex("^plugtrain: error: wide\\.toml:[0-9]+:[0-9]+: sweep\\.nodes = 4, but the cluster has 3 nodes "
                        "\\(sinfo\\)\n$")))
      << r.out;
  EXPECT_FALSE(fs::exists(dir() / "runs")) << r.out;
}

}  // namespace multinode_sweep_test
}  // namespace plugtrain
