// `plugtrain sweep exp.toml --slurm`: the trials that need training go to Slurm as one job array
// (array task i runs `plugtrain run` of trial i with --resume auto, so a requeued or preempted
// task continues from its checkpoint), and a small follow-up job, started by Slurm when the array
// has ended (--dependency=afterany), runs the same command again with --continue: it submits what
// the trials' files now call for (with a rung scheduler, the promoted trials, each resuming its
// own checkpoint) and, once nothing is left, writes the report. The command prints the job ids
// and returns at once; Slurm does all the scheduling.
//
// Files, in the sweep folder: slurm/array-<job>.sh (each array's script), slurm/jobs.tsv (job,
// array index, trial, epoch it trains to, its epochs when submitted), slurm/next.sh (the follow-up), slurm/*.out (Slurm's
// own output); each trial's output is appended to logs/<trial>.log and its exit code written to
// logs/<trial>.exit, as in a local sweep.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "sweep/sweep_plan.h"

namespace plugtrain {

// Returns the exit code (0: submitted, or nothing left to submit).
int submit_sweep_to_slurm(const SweepRequest& request, const SweepSetup& setup, std::ostream& out);

// The name of the sweep's array jobs in squeue (its follow-ups add "-next").
std::string slurm_job_name(const std::filesystem::path& sweep_folder);

// One row of slurm/jobs.tsv: array task `job_id`_`index` trains `trial`.
struct SlurmTask {
  std::string job_id;
  std::size_t index = 0;
  std::string trial;
  std::int64_t until_epoch = 0;
  std::int64_t epochs_at_start = 0;  // the trial's epochs when it was submitted
  std::string id() const { return job_id + "_" + std::to_string(index); }
};
std::vector<SlurmTask> submitted_slurm_tasks(const std::filesystem::path& sweep_folder);

}  // namespace plugtrain
