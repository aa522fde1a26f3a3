// torchrun's --max-restarts across the namespaces of the 3-node cluster
// (support/local_slurm_cluster.h): one node's worker killed in mid-run, the agents restart the
// whole group, which resumes from the run's last checkpoint (--resume auto) and ends with bitwise
// the weights of a run that was never interrupted.
// ctest-label: slurm
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/multinode_jobs.h"

namespace plugtrain {
namespace multinode_restart_test {

using testing::shell_quote;
using testing::slurp;

#ifdef PLUGTRAIN_TORCHRUN
class TorchrunRestartTest : public testing::MultiNodeJobTest {
 protected:
  // Node NODE's torchrun agent (1 or 2), started in that node's network namespace as an admin
  // would start it there (the recipe of docs/multinode.md), in the background as $A<NODE>;
  // its output (and its worker's) in agent<NODE>.txt. Bounded: a rendezvous that never
  // completes would wait for torchrun's own 10 minutes.
  std::string agent(int node, const std::string& torchrun_options, const std::string& run_args) const {
    return "timeout 150 env -u PLUGTRAIN_PLUGIN_PATH nsenter --net=/run/netns/" + node_namespace(node) + " " +
           shell_quote(PLUGTRAIN_TORCHRUN) + " --no-python --nnodes 2 --nproc-per-node 1 " + torchrun_options +
           " --rdzv-backend c10d --rdzv-id restart --rdzv-endpoint " + node_address(1) +
           ":29400 --rdzv-conf is_host=" + (node == 1 ? "1" : "0") + " --local-addr " + node_address(node) + " " +
           shell_quote(PLUGTRAIN_EXE) + " run " + run_args + " > agent" + std::to_string(node) + ".txt 2>&1 & A" +
           std::to_string(node) + "=$!\n";
  }
};

// n2's worker is killed (SIGKILL, as the OOM killer or a crash ends it) once epoch 2 is done.
// Its agent restarts it, n1's agent restarts its own worker with it (one group, one restart
// each), both resume runs/restarted's last checkpoint, and the run ends with the weights of the
// same two ranks uninterrupted under Slurm.
TEST_F(TorchrunRestartTest, AWorkerKilledMidRunRestartsTheGroupWhichResumesToTheWeightsOfAnUninterruptedRun) {
  testing::multinode_experiment("restarted").write(dir() / "restarted.toml");
  testing::multinode_experiment("straight").write(dir() / "straight.toml");
  const std::string args = " --resume auto --set train.epochs=30 --set train.threads=1";
  const std::string kill_worker_on_n2 =
      "K=0; for p in $(ip netns pids " + node_namespace(2) +
      "); do [ \"$(cat /proc/$p/comm 2>/dev/null)\" = plugtrain ] && kill -KILL $p && K=1; done\n";
  const testing::ProcessResult r = slurm(
      testing::kJobShellFunctions + agent(1, "--max-restarts 1", "restarted.toml" + args) +
      agent(2, "--max-restarts 1", "restarted.toml" + args) + "wait_for '^epoch 2/' agent1.txt || exit 1\n" +
      kill_worker_on_n2 + "wait $A1; E1=$?; wait $A2; echo \"KILLED=$K AGENTS=$E1,$?\"\n" +
      submit("S", "straight", "-N 2 --ntasks-per-node 1", "straight.toml" + args) + "echo \"STRAIGHT=$(ended $S)\"");
  const std::string agent1 = slurp(dir() / "agent1.txt"), agent2 = slurp(dir() / "agent2.txt");
  ASSERT_EQ(value(r.out, "KILLED"), "1") << r.out << agent1 << agent2;
  ASSERT_EQ(value(r.out, "AGENTS"), "0,0") << r.out << agent1 << agent2;
  ASSERT_EQ(value(r.out, "STRAIGHT"), "COMPLETED") << r.out;
  // The worker of the first attempt and of the second each said where they stood.
  EXPECT_NE(agent1.find("resumed from runs/restarted/version_0/checkpoints/last.ckpt"), std::string::npos) << agent1;
  const auto summary = nlohmann::json::parse(slurp(dir() / "runs" / "restarted" / "version_0" / "summary.json"));
  EXPECT_EQ(summary["epochs"].size(), 30u);
  EXPECT_EQ(summary["plan"]["world_source"], "torchrun");
  EXPECT_FALSE(std::filesystem::exists(dir() / "runs" / "restarted" / "version_1")) << "the restart resumed";
  expect_bitwise_same_weights("restarted", "straight");
}

#else
TEST(TorchrunRestartTest, AWorkerKilledMidRunRestartsTheGroupWhichResumesToTheWeightsOfAnUninterruptedRun) {
  GTEST_SKIP() << "no torchrun beside the torch wheel";
}
#endif

}  // namespace multinode_restart_test
}  // namespace plugtrain
