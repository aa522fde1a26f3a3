// A real Slurm cluster of 3 nodes on this machine, each slurmd in a network namespace of its own
// with its own address (tests/slurm/netns_slurm.sh), started once for the whole test binary
// and stopped when it ends. A test derives from SlurmClusterTest; where the cluster cannot run
// (not root, no iproute2 or Slurm, a kernel without network namespaces) every test is skipped
// with the script's reason. The binary's own pid owns the cluster: if the binary is killed, the
// next start anywhere stops what it left. Header-only; its environment is an inline variable,
// registered once however many .cpp files of a binary include it.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "support/run_process.h"

namespace plugtrain::testing {

struct SlurmCluster {
  std::filesystem::path dir;   // the cluster's own folder (slurm.conf, logs)
  std::filesystem::path conf;  // its slurm.conf
  std::string subnet;          // X of 10.77.X.0/24; node i is 10.77.X.i in namespace ptnX-i
  std::string skipped;         // why the cluster does not run here ("" when it runs)
  std::string failed;          // a start that failed for a reason other than a missing capability
};

class SlurmClusterEnvironment : public ::testing::Environment {
 public:
  static SlurmCluster& cluster() {
    static SlurmCluster c;
    return c;
  }
  static std::string script() { return shell_quote(std::string(PLUGTRAIN_SOURCE_DIR) + "/tests/slurm/netns_slurm.sh"); }

  void SetUp() override {
    SlurmCluster& c = cluster();
    // Short: slurmd's unix sockets live in the spool folder, and a socket path has 108 bytes.
    char folder[] = "/tmp/ptmn-XXXXXX";
    if (!::mkdtemp(folder)) {
      c.failed = "mkdtemp failed";
      return;
    }
    c.dir = folder;
    const ProcessResult started = run_process("PLUGTRAIN_CLUSTER_OWNER=" + std::to_string(::getpid()) + " " + script() +
                                              " start " + shell_quote(c.dir.string()) + " 3");
    if (started.exit_code == 77) {
      c.skipped = started.out;
      return;
    }
    if (started.exit_code != 0) {
      c.failed = started.out;
      return;
    }
    c.conf = c.dir / "slurm.conf";
    c.subnet = slurp(c.dir / "netns.subnet");
    while (!c.subnet.empty() && c.subnet.back() == '\n') c.subnet.pop_back();
  }
  void TearDown() override {
    SlurmCluster& c = cluster();
    if (c.dir.empty()) return;
    run_process(script() + " stop " + shell_quote(c.dir.string()));
    if (!::testing::UnitTest::GetInstance()->Failed()) {
      std::error_code ec;
      std::filesystem::remove_all(c.dir, ec);
    }
  }
};

// Registered once, before main runs the tests.
inline ::testing::Environment* const kSlurmClusterEnvironment =
    ::testing::AddGlobalTestEnvironment(new SlurmClusterEnvironment);

class SlurmClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const SlurmCluster& c = SlurmClusterEnvironment::cluster();
    if (!c.skipped.empty()) GTEST_SKIP() << c.skipped;
    ASSERT_TRUE(c.failed.empty()) << "the cluster did not start: " << c.failed;
    dir_ = scratch_dir("cluster");
  }
  void TearDown() override {
    std::error_code ec;
    if (!HasFailure()) std::filesystem::remove_all(dir_, ec);
  }

  // `command` run in the test's folder against the cluster (SLURM_CONF set), stderr merged.
  ProcessResult slurm(const std::string& command) const {
    return run_process("cd " + shell_quote(dir_.string()) +
                       " && export SLURM_CONF=" + shell_quote(cluster().conf.string()) + " && " + command);
  }
  static const SlurmCluster& cluster() { return SlurmClusterEnvironment::cluster(); }
  // Node i's address (1-based) and network namespace.
  static std::string node_address(int i) { return "10.77." + cluster().subnet + "." + std::to_string(i); }
  static std::string node_namespace(int i) { return "ptn" + cluster().subnet + "-" + std::to_string(i); }
  // The host's end of node i's link to the bridge: down, the node is cut off as by a broken switch.
  static std::string node_link(int i) { return "ptn" + cluster().subnet + "v" + std::to_string(i); }
  const std::filesystem::path& dir() const { return dir_; }

  // KEY=value from a scenario's output.
  static std::string value(const std::string& out, const std::string& key) {
    std::smatch m;
    return std::regex_search(out, m, std::regex(key + "=(\\S*)")) ? m[1].str() : "";
  }

 private:
  std::filesystem::path dir_;
};

}  // namespace plugtrain::testing
