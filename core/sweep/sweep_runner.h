// `plugtrain sweep exp.toml`: every trial of the [sweep] table validated up front, then each
// trained as a normal `plugtrain run` in its own folder (runs/<name>/sweep/<trial>/), N at a
// time; finished trials are skipped and interrupted ones resumed when the same command runs
// again; at the end, the report (sweep/sweep_report.h). With a rung scheduler (asha, hyperband)
// a trial trains to its rung and waits there to be promoted or stopped (sweep/rung_scheduler.h);
// with --slurm the same decisions are submitted as job arrays (sweep/slurm_sweep.h).
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

namespace plugtrain {

struct SweepRequest {
  std::filesystem::path experiment_file;
  std::vector<std::string> overrides;  // --set for every trial
  std::vector<std::filesystem::path> plugin_paths;
  int jobs = 0;          // trials at the same time; 0: one per device of the chosen backend (1 on the CPU)
  bool dry_run = false;  // list the trials, train none
  bool host_cpu_only = false;
  std::filesystem::path executable;  // the plugtrain binary each trial runs

  // --slurm: submit the trials as a Slurm job array instead of running them here.
  bool slurm = false;
  std::string partition;                 // --partition ("": the cluster's default)
  std::string time_limit;                // --time, per array task
  int gpus_per_trial = 0;                // --gpus-per-task of each array task
  std::vector<std::string> sbatch_args;  // passed to sbatch as they are
  // Set on the sweep's own follow-up job: a trial whose last attempt failed is not retried.
  bool continuing = false;
};

// Returns the exit code: 0 when every trial finished, 130 when interrupted, 1 when a trial failed.
int run_sweep(const SweepRequest& request, std::ostream& out);

}  // namespace plugtrain
