// Slurm's own variables as a rank reads them when srun is given no MASTER_ADDR or MASTER_PORT:
// the compressed node and tasks-per-node lists, the port from the job id, and the errors a
// broken environment gives. (The torchrun and launcher variables: tests/distributed/distributed_test.cpp.)
// ctest-label: unit
#include <string>

#include <gtest/gtest.h>

#include "distributed/slurm_hostlist.h"
#include "distributed/world.h"

namespace plugtrain {
namespace world_test {

std::string first_host(const std::string& list) {
  const Result<std::string> host = first_slurm_host(list);
  return host ? host.value() : "refused: " + host.why_not();
}

std::string tasks(const std::string& list, int node) {
  const Result<int> n = slurm_tasks_on_node(list, node);
  return n ? std::to_string(n.value()) : "refused: " + n.why_not();
}

TEST(SlurmHostlist, FirstHostOfEachFormSlurmWrites) {
  EXPECT_EQ(first_host("host"), "host");
  EXPECT_EQ(first_host("node[01-04,07],gpu3"), "node01");
  EXPECT_EQ(first_host("a1,b[2-3]"), "a1");
  EXPECT_EQ(first_host("n[009-011]"), "n009");  // zero padding is part of the name
  EXPECT_EQ(first_host("n[7,3-5]"), "n7");      // the first as written, not the lowest
  EXPECT_EQ(first_host("gpu-[10-12].cluster"), "gpu-10.cluster");
  EXPECT_EQ(first_host("rack[1-2]-n[01-04]"), "rack1-n01");  // several dimensions
  EXPECT_EQ(first_host("n[099-100]"), "n099");
}

TEST(SlurmHostlist, MalformedListsAreRefusedWithTheReason) {
  EXPECT_EQ(first_host(""), "refused: it is empty");
  EXPECT_EQ(first_host("node[01-04"), "refused: a '[' is not closed");
  EXPECT_EQ(first_host("node[01[2]]"), "refused: a '[' is not closed");
  EXPECT_EQ(first_host("node01]"), "refused: a ']' closes no '['");
  EXPECT_EQ(first_host("a,,b"), "refused: it has an empty host name");
  EXPECT_EQ(first_host("a,"), "refused: it has an empty host name");
  EXPECT_EQ(first_host("node[a-b]"), "refused: [a-b] holds 'a-b', not a number or a range like 01-04");
  EXPECT_EQ(first_host("node[1,]"), "refused: [1,] holds '', not a number or a range like 01-04");
  EXPECT_EQ(first_host("node[4-2]"), "refused: [4-2] holds the range 4-2, which runs backwards");
  EXPECT_EQ(first_host("a b"), "refused: it holds a space or control character");
  EXPECT_EQ(first_host("good,bad[1-"), "refused: a '[' is not closed") << "the whole list is checked";
}

TEST(SlurmHostlist, TasksOnANodeFromTheRepeatedCounts) {
  EXPECT_EQ(tasks("2", 0), "2");
  EXPECT_EQ(tasks("2(x3),1", 0), "2");
  EXPECT_EQ(tasks("2(x3),1", 2), "2");
  EXPECT_EQ(tasks("2(x3),1", 3), "1");
  EXPECT_EQ(tasks("1,4(x2)", 2), "4");
  EXPECT_EQ(tasks("2(x3),1", 4), "refused: node 4 is past its last node, 3");
  EXPECT_EQ(tasks("2(x3", 0), "refused: '2(x3' is not a task count like 2 or 2(x3)");
  EXPECT_EQ(tasks("two", 0), "refused: 'two' is not a task count like 2 or 2(x3)");
  EXPECT_EQ(tasks("0", 0), "refused: '0' is not a task count like 2 or 2(x3)");
  EXPECT_EQ(tasks("", 0), "refused: '' is not a task count like 2 or 2(x3)");
}

// What srun puts in the environment of task `rank` of a 2-node, 8-task step (4 per node), job 123456.
Environment srun_task(int rank) {
  return {{"SLURM_PROCID", std::to_string(rank)},
          {"SLURM_STEP_ID", "0"},
          {"SLURM_NTASKS", "8"},
          {"SLURM_LOCALID", std::to_string(rank % 4)},
          {"SLURM_NODEID", std::to_string(rank / 4)},
          {"SLURM_JOB_ID", "123456"},
          {"SLURM_JOB_NODELIST", "gpu[07-08]"},
          {"SLURM_STEP_NODELIST", "gpu[07-08]"},
          {"SLURM_TASKS_PER_NODE", "4(x2)"},
          {"SLURM_STEP_TASKS_PER_NODE", "4(x2)"}};
}

std::string error_of(const Environment& env) {
  try {
    world_from_environment(env);
  } catch (const DistributedError& e) { return e.what(); }
  return "no error";
}

TEST(World, SlurmAloneGivesTheRendezvousFromTheNodeListAndTheJobId) {
  for (int rank : {0, 5}) {
    const auto w = world_from_environment(srun_task(rank));
    ASSERT_TRUE(w);
    EXPECT_EQ(w->source, "slurm");
    EXPECT_EQ(w->rank, rank);
    EXPECT_EQ(w->world_size, 8);
    EXPECT_EQ(w->local_rank, rank % 4);
    EXPECT_EQ(w->local_world_size, 4);
    EXPECT_EQ(w->master_addr, "gpu07") << "every task names the step's first node";
    EXPECT_EQ(w->master_port, 15000 + 123456 % 17000);
  }
}

TEST(World, SlurmPrefersTheStepsListsToTheJobs) {
  // A step on the last two nodes of a 3-node job, 3 tasks: 2 on gpu08, 1 on gpu09.
  Environment env = srun_task(2);
  env["SLURM_NTASKS"] = "3";
  env["SLURM_LOCALID"] = "0";
  env["SLURM_NODEID"] = "1";
  env["SLURM_JOB_NODELIST"] = "gpu[07-09]";
  env["SLURM_STEP_NODELIST"] = "gpu[08-09]";
  env["SLURM_TASKS_PER_NODE"] = "4(x3)";
  env["SLURM_STEP_TASKS_PER_NODE"] = "2,1";
  const auto w = world_from_environment(env);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->master_addr, "gpu08");
  EXPECT_EQ(w->local_world_size, 1);
  env.erase("SLURM_STEP_NODELIST");
  env.erase("SLURM_STEP_TASKS_PER_NODE");
  EXPECT_EQ(world_from_environment(env)->master_addr, "gpu07");
  EXPECT_EQ(world_from_environment(env)->local_world_size, 4) << "the job's list, node 1's entry";
}

TEST(World, SlurmLocalWorldSizeFromTheTasksPerNodeList) {
  Environment env = srun_task(6);  // 7 tasks: 4 on node 0, 3 on node 1
  env["SLURM_NTASKS"] = "7";
  env.erase("SLURM_STEP_TASKS_PER_NODE");
  env["SLURM_TASKS_PER_NODE"] = "4,3";
  EXPECT_EQ(world_from_environment(env)->local_world_size, 3);
  env.erase("SLURM_TASKS_PER_NODE");
  env["SLURM_NTASKS_PER_NODE"] = "4";  // only with --ntasks-per-node, and only without the lists
  EXPECT_EQ(world_from_environment(env)->local_world_size, 4);
}

TEST(World, AnExplicitMasterAddrAndPortWinOverSlurm) {
  Environment env = srun_task(1);
  env["MASTER_ADDR"] = "10.0.0.5";
  env["MASTER_PORT"] = "29500";
  const auto w = world_from_environment(env);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->master_addr, "10.0.0.5");
  EXPECT_EQ(w->master_port, 29500);
  env.erase("MASTER_PORT");  // each may be given alone
  EXPECT_EQ(world_from_environment(env)->master_addr, "10.0.0.5");
  EXPECT_EQ(world_from_environment(env)->master_port, 15000 + 123456 % 17000);
}

TEST(World, SlurmJobIdsOfAnySizeGiveAPortInTheRange) {
  Environment env = srun_task(0);
  for (const char* id : {"1", "16999", "17000", "4294967295", "123456789012"}) {
    env["SLURM_JOB_ID"] = id;
    const int port = world_from_environment(env)->master_port;
    EXPECT_GE(port, 15000) << id;
    EXPECT_LE(port, 31999) << id;
  }
  env["SLURM_JOB_ID"] = "17001";
  EXPECT_EQ(world_from_environment(env)->master_port, 15001);
}

TEST(World, BrokenSlurmVariablesAreNamedInOneLine) {
  auto with = [](const std::string& name, const std::string& value) {
    Environment env = srun_task(0);
    env[name] = value;
    return error_of(env);
  };
  EXPECT_EQ(with("SLURM_STEP_NODELIST", "gpu[07-"),
            "environment variable SLURM_STEP_NODELIST='gpu[07-' is not a Slurm host list like node[01-04,07],gpu3: "
            "a '[' is not closed");
  EXPECT_EQ(with("SLURM_JOB_ID", "12x"), "environment variable SLURM_JOB_ID='12x' is not a job id");
  Environment one_node = srun_task(4);  // on node 1 of a list that has only node 0
  one_node["SLURM_STEP_TASKS_PER_NODE"] = "4";
  EXPECT_EQ(error_of(one_node),
            "environment variable SLURM_STEP_TASKS_PER_NODE='4' does not give this node's tasks (SLURM_NODEID=1): "
            "node 1 is past its last node, 0");
  Environment no_lists = srun_task(0);
  no_lists.erase("SLURM_STEP_NODELIST");
  no_lists.erase("SLURM_JOB_NODELIST");
  EXPECT_EQ(error_of(no_lists),
            "environment variable MASTER_ADDR is not set, nor is SLURM_STEP_NODELIST or SLURM_JOB_NODELIST (whose "
            "first host would be the rendezvous under Slurm)");
  Environment no_job = srun_task(0);
  no_job.erase("SLURM_JOB_ID");
  EXPECT_NE(error_of(no_job).find("environment variable MASTER_PORT is not set, nor is SLURM_JOB_ID"),
            std::string::npos);
  for (const std::string& e : {with("SLURM_STEP_NODELIST", "a,,b"), with("SLURM_JOB_ID", "x")})
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

}  // namespace world_test
}  // namespace plugtrain
