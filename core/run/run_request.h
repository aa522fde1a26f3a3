// What `plugtrain run` is asked to do, and what it did.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "run/resume_request.h"
#include "train/trainer.h"

namespace plugtrain {

struct RunRequest {
  std::filesystem::path experiment_file;
  // Set: the experiment's TOML itself (a checkpoint's record), read instead of experiment_file,
  // which then only names it in messages.
  std::string experiment_text;
  // The data set is not read (`plugtrain predict`): data.path is not checked.
  bool data_not_read = false;
  std::vector<std::string> overrides;  // "key.path=value"
  std::vector<std::filesystem::path> plugin_paths;
  bool host_cpu_only = false;                // --no-gpu: only the host CPU's backend may be chosen
  std::vector<std::string> disable_backends;  // e.g. --no-mps
  ResumeRequest resume;
  // --profile and --profile-steps: train.profile = true and train.profile_steps, on top of the
  // experiment and its overrides (0: the experiment's steps).
  bool profile = false;
  std::int64_t profile_steps = 0;
  // select = "fastest": measure the backends again instead of using the cached choice.
  bool measure_again = false;
  // A trained model used again (`evaluate`, `predict`): one process on one device (priority
  // selection, strategy single), nothing that only training needs (graphs, the profiler, data on
  // the device), and no [model] init, whose weights the trained ones replace (its file need not
  // exist any more). Set on the experiment after the user's overrides, so these hold.
  bool use_trained = false;
  // One trial of `plugtrain sweep`: the file's [sweep] table belongs to the sweep.
  bool sweep_trial = false;
  // > 0: stop after this epoch with its checkpoint, the schedule still that of train.epochs, so
  // `--resume` continues as if nothing had stopped (a sweep scheduler's rung). 0: no pause.
  std::int64_t stop_after_epoch = 0;
  // This program's own command line: with devices = N, N copies of it are started as workers.
  std::vector<std::string> command_line;
};

// What the plan decided about processes, devices and the batch (run/plan.h), as summary.json's
// "plan" gives it: the structured form of the run's dp/ddp and batch lines.
struct PlanSummary {
  std::string strategy = "single";   // single, dp, ddp or fsdp
  int world_size = 1;                // processes that train together
  std::string world_source;          // what started the ranks: plugtrain, torchrun, launcher variables, slurm,
                                     // mpi (distributed/world.h); empty: none did
  std::vector<std::string> devices;  // this process's devices (dp: one per replica)
  std::int64_t devices_used = 1;     // devices over which a step's global batch is split
  std::int64_t per_device_batch = 0;
  std::int64_t global_batch = 0;
  double lr = 0;         // optim.lr x lr_factor
  double lr_factor = 1;  // optim.lr_scaling for global / data.batch_size
};

struct RunResult {
  TrainSummary summary;
  std::string backend;
  std::string device;
  std::filesystem::path run_folder;
  std::filesystem::path summary_file;
  // This process only started and watched the worker processes (ddp on one machine).
  bool launched_workers = false;
  int workers_exit_code = 0;
  int world_size = 1;  // processes that trained together
  PlanSummary plan;
  // Operators the backend ran on the CPU in this process (SDK 3.4), with their calls.
  std::map<std::string, std::uint64_t> cpu_fallbacks;
  std::vector<std::string> step_host_reads;  // the plan's (plan.h)
};

}  // namespace plugtrain
