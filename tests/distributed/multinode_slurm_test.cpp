// ddp across machines, on a real Slurm cluster of 3 nodes whose slurmd each run in a network
// namespace of their own (tests/slurm/netns_slurm.sh): node names that resolve nowhere, an
// address per node, an interface (eth0) that is not the loopback, a node lost mid-run.
// One cluster for the whole binary (tests/support/local_slurm_cluster.h).
// ctest-label: slurm
#include <algorithm>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/multinode_jobs.h"

namespace plugtrain {
namespace multinode_slurm_test {

using testing::shell_quote;
using testing::slurp;
namespace fs = std::filesystem;

using MultiNodeTest = testing::MultiNodeJobTest;
testing::ExperimentToml experiment(const std::string& name) { return testing::multinode_experiment(name); }
const std::string& kShellFunctions = testing::kJobShellFunctions;

TEST_F(MultiNodeTest, TwoNodesTrainTheWeightsOfFourProcessesOnOne) {
  experiment("two").write(dir() / "two.toml");
  experiment("one").write(dir() / "one.toml");
  // Both at once: the first takes n1 and n2, the second the node left.
  const testing::ProcessResult r =
      slurm(kShellFunctions + submit("A", "two", "-N 2 --ntasks-per-node 2", "two.toml") +
            submit("B", "one", "-N 1 -n 4", "one.toml") +
            "echo \"A=$A TWO=$(ended $A) NODES=$(squeue -h -t all -j $A -o %N) B=$B ONE=$(ended $B) "
            "NODE=$(squeue -h -t all -j $B -o %N)\"");
  const std::string two = output("two", value(r.out, "A")), one = output("one", value(r.out, "B"));
  ASSERT_EQ(value(r.out, "TWO"), "COMPLETED") << r.out << two;
  ASSERT_EQ(value(r.out, "ONE"), "COMPLETED") << r.out << one;
  EXPECT_EQ(value(r.out, "NODES"), "n[1-2]") << r.out;
  // The rendezvous is n1's own address (its NodeAddr: the name n1 resolves nowhere), reached
  // over eth0, the namespace's interface, not over the loopback the host name resolves to.
  EXPECT_NE(two.find("ddp: 4 processes (slurm, rendezvous " + node_address(1) + ":"), std::string::npos) << two;
  EXPECT_NE(two.find(", n1's NodeAddr over eth0)"), std::string::npos) << two;
  const std::string node = value(r.out, "NODE");
  EXPECT_NE(one.find(", " + node + "'s NodeAddr over eth0)"), std::string::npos) << one;
  const auto summary = nlohmann::json::parse(slurp(dir() / "runs" / "two" / "version_0" / "summary.json"));
  EXPECT_EQ(summary["world_size"], 4);
  // Bitwise, tighter than the tolerance of the ddp tests that compare a world with one process
  // (another order of sums): Gloo picks its all-reduce algorithm and the order it adds the ranks'
  // buckets in from the world size, the ranks and the sizes, never from where the ranks run, and
  // each rank reads the same shard of the data. So 4 ranks on 2 nodes add in 1 node's order.
  expect_bitwise_same_weights("two", "one");
}

// fsdp's all-gathers and reduce-scatters cross the nodes the same way: 2 nodes x 2 ranks, each
// keeping a quarter of the model's state, give bitwise the weights of 4 ranks on one node.
TEST_F(MultiNodeTest, FsdpOnTwoNodesTrainsTheWeightsOfFourProcessesOnOne) {
  experiment("fsdp2").write(dir() / "fsdp2.toml");
  experiment("fsdp1").write(dir() / "fsdp1.toml");
  const std::string args = " --set backend.strategy=fsdp --set distributed.shard=full";
  const testing::ProcessResult r =
      slurm(kShellFunctions + submit("A", "fsdp2", "-N 2 --ntasks-per-node 2", "fsdp2.toml" + args) +
            submit("B", "fsdp1", "-N 1 -n 4", "fsdp1.toml" + args) + "echo \"TWO=$(ended $A) ONE=$(ended $B)\"");
  ASSERT_EQ(value(r.out, "TWO"), "COMPLETED") << r.out;
  ASSERT_EQ(value(r.out, "ONE"), "COMPLETED") << r.out;
  const auto summary = nlohmann::json::parse(slurp(dir() / "runs" / "fsdp2" / "version_0" / "summary.json"));
  EXPECT_EQ(summary["strategy"], "fsdp");
  EXPECT_EQ(summary["world_size"], 4);
  expect_bitwise_same_weights("fsdp2", "fsdp1");
}

TEST_F(MultiNodeTest, AnInterfaceKeyNamingNoInterfaceIsOneLine) {
  experiment("bad").write(dir() / "exp.toml");
  const std::string out = failed_job("-N 2 --ntasks-per-node 1", "exp.toml --set distributed.interface=eth9");
  EXPECT_NE(out.find("error: rank 0: distributed.interface = \"eth9\" names no network interface on this host (n1); "
                     "it has lo, eth0\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("error: rank 1: distributed.interface = \"eth9\" names no network interface on this host (n2)"),
            std::string::npos)
      << out;
}

// `srun -N 2 plugtrain doctor --json`: each node says what it sees — its own address on its own
// interface, its rank, and the rendezvous a run would use (n1's NodeAddr, over eth0).
TEST_F(MultiNodeTest, DoctorUnderSlurmSaysWhatEachNodeSees) {
  const testing::ProcessResult r =
      slurm("env -u PLUGTRAIN_PLUGIN_PATH srun -N 2 --ntasks-per-node 1 -o doctor-%t.json " +
            shell_quote(PLUGTRAIN_EXE) + " doctor --json; echo SRUN=$?");
  ASSERT_EQ(value(r.out, "SRUN"), "0") << r.out;
  for (int rank = 0; rank < 2; ++rank) {
    const std::string text = slurp(dir() / ("doctor-" + std::to_string(rank) + ".json"));
    const nlohmann::json network = nlohmann::json::parse(text)["network"];
    const std::string node = "n" + std::to_string(rank + 1);
    EXPECT_EQ(network["world"]["rank"], rank) << text;
    EXPECT_EQ(network["world"]["world_size"], 2) << text;
    EXPECT_EQ(network["world"]["node"], node) << text;
    EXPECT_TRUE(std::any_of(
        network["interfaces"].begin(), network["interfaces"].end(),
        [&](const nlohmann::json& i) { return i["name"] == "eth0" && i["address"] == node_address(rank + 1); }))
        << "its own address on its own interface: " << network["interfaces"].dump();
    EXPECT_EQ(network["rendezvous"]["address"], node_address(1)) << text;
    EXPECT_EQ(network["rendezvous"]["address_source"], "n1's NodeAddr") << text;
    EXPECT_EQ(network["rendezvous"]["interface"], "eth0") << text;
    EXPECT_TRUE(network["problem"].is_null()) << text;
  }
}

TEST_F(MultiNodeTest, AFirstNodeWithoutAnAddressIsNamedWithWhatWasTried) {
  experiment("bad").write(dir() / "exp.toml");
  // A rank of a step whose first node Slurm does not know and no resolver can find.
  const testing::ProcessResult r = slurm(testing::plugtrain_command(
      "run exp.toml", "SLURM_PROCID=1 SLURM_NTASKS=2 SLURM_STEP_ID=0 SLURM_STEP_NODELIST=n[9-10] SLURM_JOB_ID=7"));
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("error: rank 1: the rendezvous node n9 (the step's first) has no address this rank can reach: "
                       "scontrol show node n9: "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("; the resolver: n9: "), std::string::npos) << r.out;
}

TEST_F(MultiNodeTest, NodesWithDifferentExperimentsAreRefusedAtTheRendezvous) {
  // Each node reads its own copy, and n2's says another learning rate.
  experiment("differs").write(dir() / "exp-0.toml");
  experiment("differs").set("optim.lr", 0.07).write(dir() / "exp-1.toml");
  const testing::ProcessResult r =
      slurm(kShellFunctions +
            "J=$(env -u PLUGTRAIN_PLUGIN_PATH sbatch --parsable -N 2 "
            "--ntasks-per-node 1 -o bad-%j.txt --wrap " +
            shell_quote("srun sh -c 'exec " + std::string(PLUGTRAIN_EXE) + " run exp-$SLURM_NODEID.toml'") +
            ") || exit 1\necho \"JOB=$J STATE=$(ended $J)\"");
  const std::string out = output("bad", value(r.out, "JOB"));
  EXPECT_EQ(value(r.out, "STATE"), "FAILED") << r.out << out;
  EXPECT_NE(out.find("rank 1 (node n2) runs another experiment than rank 0 (node n1) (fnv1a "), std::string::npos)
      << out;
  EXPECT_EQ(out.find("epoch 1/"), std::string::npos) << "refused before training: " << out;
}

// torchrun's c10d rendezvous across the namespaces, each agent started on its node (as an admin
// would by ssh; here nsenter into the node's network). Two things a cluster needs that one machine
// hides: the agent on the endpoint's node must be told it hosts the store (is_host: it matches
// the endpoint against its host name, which resolves to 127.0.0.1 here), and each agent must
// say its own address (--local-addr), or the workers are sent to the host name's 127.0.0.1.
// The run gives bitwise the weights of the same 2 ranks under Slurm. (timeout: a rendezvous that
// never completes would wait for torchrun's own 10 minutes.)
TEST_F(MultiNodeTest, TorchrunAcrossTheNodesTrainsTheWeightsOfSlurm) {
#ifndef PLUGTRAIN_TORCHRUN
  GTEST_SKIP() << "no torchrun beside the torch wheel";
#else
  experiment("torchrun").write(dir() / "torchrun.toml");
  experiment("slurm").write(dir() / "slurm.toml");
  std::string agents;
  for (int node = 1; node <= 2; ++node)
    agents += "timeout 120 env -u PLUGTRAIN_PLUGIN_PATH nsenter --net=/run/netns/" + node_namespace(node) + " " +
              shell_quote(PLUGTRAIN_TORCHRUN) +
              " --no-python --nnodes 2 --nproc-per-node 1 --rdzv-backend c10d --rdzv-id multinode --rdzv-endpoint " +
              node_address(1) + ":29400 --rdzv-conf is_host=" + (node == 1 ? "1" : "0") + " --local-addr " +
              node_address(node) + " " + shell_quote(PLUGTRAIN_EXE) + " run torchrun.toml > agent" +
              std::to_string(node) + ".txt 2>&1 & A" + std::to_string(node) + "=$!\n";
  const testing::ProcessResult r =
      slurm(kShellFunctions + agents + "wait $A1; E1=$?; wait $A2; echo \"AGENTS=$E1,$?\"\n" +
            submit("J", "slurm", "-N 2 --ntasks-per-node 1", "slurm.toml") + "echo \"SLURM=$(ended $J)\"");
  const std::string agent1 = slurp(dir() / "agent1.txt");
  ASSERT_EQ(value(r.out, "AGENTS"), "0,0") << r.out << agent1 << slurp(dir() / "agent2.txt");
  ASSERT_EQ(value(r.out, "SLURM"), "COMPLETED") << r.out;
  EXPECT_NE(agent1.find("ddp: 2 processes (torchrun, rendezvous " + node_address(1) + ":"), std::string::npos)
      << agent1;
  EXPECT_NE(agent1.find(" over eth0, torchrun's agent store)"), std::string::npos) << agent1;
  expect_bitwise_same_weights("torchrun", "slurm");
#endif
}

// Node n2 is lost in mid-run: every process of the job on it killed at once, as a machine that
// goes down. The survivor on n1 names the lost rank and its node in one line and exits within
// distributed.timeout (and the few seconds it gives the others to say why), never hangs.
TEST_F(MultiNodeTest, ANodeWhoseTasksAreKilledIsNamedAndTheSurvivorExits) {
  constexpr int kTimeout = 10;
  experiment("lost").set("distributed.timeout", kTimeout).write(dir() / "exp.toml");
  const std::string kill_node =
      "for p in $(ip netns pids " + node_namespace(2) +
      "); do [ \"$(cat /proc/$p/comm 2>/dev/null)\" = plugtrain ] && kill -KILL $p && K=1; done\n";
  const testing::ProcessResult r =
      slurm(kShellFunctions + submit("J", "lost", "-N 2 --ntasks-per-node 1", "exp.toml --set train.epochs=100000") +
            "wait_for '^epoch 1/' lost-$J.txt || exit 1\nK=0\n" + kill_node +
            "T0=$(date +%s.%N)\nS=$(ended $J)\n"
            "echo \"KILLED=$K STATE=$S JOB=$J SECONDS=$(echo \"$(date +%s.%N) - $T0\" | bc)\"");
  const std::string out = output("lost", value(r.out, "JOB"));
  ASSERT_EQ(value(r.out, "KILLED"), "1") << r.out << out;
  EXPECT_EQ(value(r.out, "STATE"), "FAILED") << r.out << out;
  EXPECT_LT(std::stod(value(r.out, "SECONDS")), kTimeout + 10) << r.out << out;
  // Who speaks first is a race: rank 0 naming the lost node (the killed-tasks case tests its
  // words), or Slurm cancelling the step when it marks n2 down (SlurmdTimeout). Either way the
  // job was interrupted, and requeued.
  EXPECT_TRUE(out.find("error: rank 0 (node n1): training failed; rank 1 (node n2) stopped answering") !=
                  std::string::npos ||
              out.find("DUE TO NODE FAILURE") != std::string::npos)
      << out;
}

// A node dies as a machine does (slurmd, slurmstepd and tasks killed at once). Slurm marks it
// down (SlurmdTimeout, 6 s here) and requeues the job submitted with --requeue; on the nodes left
// it resumes from its last checkpoint (--resume auto) and ends with bitwise the weights of a run
// that was never interrupted.
TEST_F(MultiNodeTest, ARequeuedJobResumesAfterANodeFailureWithTheWeightsOfAnUninterruptedRun) {
  experiment("requeued").write(dir() / "requeued.toml");
  experiment("straight").write(dir() / "straight.toml");
  const std::string cluster_script = testing::SlurmClusterEnvironment::script() + " ";
  const std::string cluster_dir = shell_quote(cluster().dir.string());
  const std::string args = "--resume auto --set train.epochs=30 --set train.threads=1";
  // A requeued batch job waits for a begin time Slurm sets 2 minutes ahead; released at once.
  const testing::ProcessResult r = slurm(
      kShellFunctions +
      submit("J", "requeued", "--requeue --open-mode=append -N 2 --ntasks-per-node 1", "requeued.toml " + args) +
      "wait_for '^epoch 2/' requeued-$J.txt || exit 1\n" + cluster_script + "kill-node " + cluster_dir + " 2\n" +
      "for i in $(seq 600); do [ \"$(squeue -h -j $J -o %T)\" = PENDING ] && break; sleep 0.1; done\n"
      "echo \"REQUEUED=$(squeue -h -j $J -o %T)\"\n"
      // The first instance's srun on n1 waits KillWait for its step and then force-terminates
      // step $J.0 by that id, which the requeued instance's step would have again: released only
      // once every step daemon and the srun of the first instance have ended (anchored: this
      // script's own command line holds the same words).
      "for i in $(seq 600); do pgrep -f \"^slurmstepd: \\[$J\\.|^srun .*requeued.toml\" >/dev/null || break; sleep "
      "0.1; done\n"
      "scontrol update JobId=$J StartTime=now\n"
      "echo \"JOB=$J STATE=$(ended $J) NODES=$(squeue -h -t all -j $J -o %N)\"\n" +
      cluster_script + "revive-node " + cluster_dir + " 2\n" +
      submit("S", "straight", "-N 2 --ntasks-per-node 1", "straight.toml " + args) + "echo \"STRAIGHT=$(ended $S)\"");
  const std::string out = output("requeued", value(r.out, "JOB"));
  ASSERT_EQ(value(r.out, "REQUEUED"), "PENDING") << r.out << out;
  ASSERT_EQ(value(r.out, "STATE"), "COMPLETED") << r.out << out;
  EXPECT_EQ(value(r.out, "NODES"), "n[1,3]") << r.out;
  EXPECT_NE(r.out.find("REVIVED=n2"), std::string::npos) << r.out;
  ASSERT_EQ(value(r.out, "STRAIGHT"), "COMPLETED") << r.out;
  // The same race as when a node's tasks are lost: rank 0 names n2, or Slurm cancels the step
  // first when it marks n2 down. Either way the first instance was interrupted.
  EXPECT_TRUE(out.find("error: rank 0 (node n1): training failed; rank 1 (node n2) stopped answering") !=
                  std::string::npos ||
              out.find("DUE TO NODE FAILURE") != std::string::npos)
      << out;
  EXPECT_NE(out.find("resumed from runs/requeued/version_0/checkpoints/last.ckpt"), std::string::npos) << out;
  const auto summary = nlohmann::json::parse(slurp(dir() / "runs" / "requeued" / "version_0" / "summary.json"));
  EXPECT_EQ(summary["epochs"].size(), 30u);
  expect_bitwise_same_weights("requeued", "straight");
}

// Node n2 cut off from the network in mid-run (its link to the bridge down): no connection is
// reset, the ranks on n1 just hear nothing more. The survivor gives up after distributed.timeout
// (and the few seconds it gives the others to say why), naming rank 1 and node n2, never hangs.
// The last case: Slurm takes up to a minute to hear n2's step end once n2 is back.
TEST_F(MultiNodeTest, ASilentNodeIsNamedAndTheSurvivorExitsWithinTheTimeoutKey) {
  constexpr int kTimeout = 5;
  experiment("silent").set("distributed.timeout", kTimeout).write(dir() / "exp.toml");
  const std::string survivors_left = "for p in $(ip netns pids " + node_namespace(1) +
                                     "); do [ \"$(cat /proc/$p/comm 2>/dev/null)\" = plugtrain ] && return 0; done; "
                                     "return 1";
  const testing::ProcessResult r =
      slurm(kShellFunctions + "running_on_n1() { " + survivors_left + "; }\n" +
            submit("J", "silent", "-N 2 --ntasks-per-node 1", "exp.toml --set train.epochs=100000") +
            "wait_for '^epoch 1/' silent-$J.txt || exit 1\nip link set " + node_link(2) +
            " down; T0=$(date +%s.%N)\n"
            "for i in $(seq 1200); do running_on_n1 || break; sleep 0.1; done\n"
            "echo \"SECONDS=$(echo \"$(date +%s.%N) - $T0\" | bc) LEFT=$(running_on_n1 && echo yes || echo no)\"\n"
            "ip link set " +
            node_link(2) + " up\necho \"JOB=$J STATE=$(ended $J)\"");
  const std::string out = output("silent", value(r.out, "JOB"));
  ASSERT_EQ(value(r.out, "LEFT"), "no") << r.out << out;
  const double seconds = std::stod(value(r.out, "SECONDS"));
  EXPECT_GT(seconds, kTimeout - 1) << "gave up before the timeout: " << r.out << out;
  EXPECT_LT(seconds, kTimeout + 10) << r.out << out;
  EXPECT_NE(out.find("error: rank 0 (node n1): training failed; rank 1 (node n2) stopped answering"), std::string::npos)
      << out;
  EXPECT_EQ(value(r.out, "STATE"), "FAILED") << r.out << out;
}

}  // namespace multinode_slurm_test
}  // namespace plugtrain
