// A real one-node Slurm cluster for one test: tests/slurm/local_slurm.sh starts munged,
// slurmctld and slurmd in a folder of the test's own with a generated slurm.conf, and stops
// them afterwards. A test derives from SlurmTest; where Slurm cannot run (no packages, not
// root, a daemon that will not start) it is skipped with the script's reason. Header-only.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "support/run_process.h"

namespace plugtrain::testing {

class SlurmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = scratch_dir("slurm");
    // The cluster's own folder is short: slurmd's unix sockets live in its spool folder, and a
    // socket's path may not exceed 108 bytes.
    char cluster[] = "/tmp/ptslurm-XXXXXX";
    ASSERT_NE(::mkdtemp(cluster), nullptr);
    cluster_ = cluster;
    const ProcessResult started = run_process(script() + " start " + shell_quote(cluster_.string()));
    if (started.exit_code == 77) {
      fs_remove();
      GTEST_SKIP() << started.out;
    }
    ASSERT_EQ(started.exit_code, 0) << started.out;
    running_ = true;
    conf_ = cluster_ / "slurm.conf";
  }
  void TearDown() override {
    if (running_) run_process(script() + " stop " + shell_quote(cluster_.string()));
    if (!HasFailure()) fs_remove();
  }

  // `command` run in the test's folder against this cluster (SLURM_CONF set), stderr merged.
  ProcessResult slurm(const std::string& command) const {
    return run_process("cd " + shell_quote(dir_.string()) + " && export SLURM_CONF=" + shell_quote(conf_.string()) +
                       " && " + command);
  }
  const std::filesystem::path& dir() const { return dir_; }
  const std::filesystem::path& conf() const { return conf_; }

 private:
  static std::string script() { return shell_quote(std::string(PLUGTRAIN_SOURCE_DIR) + "/tests/slurm/local_slurm.sh"); }
  void fs_remove() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    if (!cluster_.empty()) std::filesystem::remove_all(cluster_, ec);
  }
  std::filesystem::path dir_, conf_, cluster_;
  bool running_ = false;
};

}  // namespace plugtrain::testing
