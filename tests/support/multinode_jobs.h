// What the multi-node tests share (tests/distributed/multinode_*_test.cpp): a small experiment
// whose ranks draw the same wherever they run, shell functions that wait for Slurm's and the
// runs' events, sbatch of `srun plugtrain run`, and final weights compared bit for bit. Each case
// runs on the 3-node cluster of support/local_slurm_cluster.h.
#pragma once

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "support/experiment_toml.h"
#include "support/exported_weights.h"
#include "support/local_slurm_cluster.h"
#include "support/run_process.h"

namespace plugtrain::testing {

// No dropout or augmentation: the ranks' draws then do not depend on where they run. The
// synthetic preset with 1200 training samples of its default classes, batches of 30, 2 epochs;
// a test adds its own keys (.set("distributed.timeout", 5)) and writes it where its job reads it.
inline ExperimentToml multinode_experiment(const std::string& name) {
  ExperimentToml e = ExperimentToml::synthetic(name).on_cpu();
  e.set("experiment.seed", 11).set("model.dropout", 0.0).unset("data.synthetic_classes");
  e.set("data.synthetic_train_size", 1200).set("data.batch_size", 30).set("optim.lr", 0.05);
  return e.set("train.epochs", 2);
}

// ended JOB: until Slurm says the job is over, then its state (up to 300 s). wait_for PATTERN
// FILE: until a line of FILE matches (up to 120 s).
inline const std::string kJobShellFunctions =
    "ended() { for i in $(seq 3000); do s=$(squeue -h -t all -j $1 -o %T 2>/dev/null); case \"$s\" in "
    "\"\"|PENDING|CONFIGURING|RUNNING|SUSPENDED|COMPLETING) sleep 0.1 ;; *) echo \"$s\"; return 0 ;; esac; done; "
    "echo NEVER_ENDED; return 1; }\n"
    "wait_for() { for i in $(seq 1200); do grep -q \"$1\" \"$2\" 2>/dev/null && return 0; sleep 0.1; done; "
    "echo \"NEVER SAW $1 in $2\"; return 1; }\n";

class MultiNodeJobTest : public SlurmClusterTest {
 protected:
  // sbatch OPTIONS running `srun plugtrain run ARGS` (the README's line, nothing else), its
  // output in NAME-<job>.txt; the job's id in $VAR.
  static std::string submit(const std::string& var, const std::string& name, const std::string& options,
                            const std::string& args) {
    const std::string srun = "srun " + shell_quote(PLUGTRAIN_EXE) + " run " + args;
    return var + "=$(env -u PLUGTRAIN_PLUGIN_PATH sbatch --parsable " + options + " -o " + name + "-%j.txt --wrap " +
           shell_quote(srun) + ") || exit 1\n";
  }
  std::string output(const std::string& name, const std::string& job) const {
    return slurp(dir() / (name + "-" + job + ".txt"));
  }
  std::filesystem::path checkpoint(const std::string& name) const {
    return dir() / "runs" / name / "version_0" / "checkpoints" / "last.ckpt";
  }
  // The final weights of runs/A and runs/B (plugtrain export of their last checkpoints), bit for bit.
  void expect_bitwise_same_weights(const std::string& a_run, const std::string& b_run) {
    expect_bitwise_same_checkpoints(checkpoint(a_run), checkpoint(b_run));
  }
  void expect_bitwise_same_checkpoints(const std::filesystem::path& a_checkpoint,
                                       const std::filesystem::path& b_checkpoint) {
    const auto a = exported_weights(a_checkpoint, dir() / "a.pt");
    const auto b = exported_weights(b_checkpoint, dir() / "b.pt");
    ASSERT_EQ(a.size(), b.size());
    ASSERT_FALSE(a.empty());
    for (const auto& [name, t] : a) {
      ASSERT_TRUE(b.count(name)) << name;
      EXPECT_TRUE(t.equal(b.at(name))) << a_checkpoint << " vs " << b_checkpoint << ": " << name << " differs by "
                                       << (t - b.at(name)).abs().max().item<double>();
    }
  }
  // The job's one output, which every rank writes into, and that the job failed.
  std::string failed_job(const std::string& options, const std::string& args) {
    const ProcessResult r =
        slurm(kJobShellFunctions + submit("J", "bad", options, args) + "echo \"JOB=$J STATE=$(ended $J)\"");
    EXPECT_EQ(value(r.out, "STATE"), "FAILED") << r.out;
    return output("bad", value(r.out, "JOB"));
  }
};

}  // namespace plugtrain::testing
