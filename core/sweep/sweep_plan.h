// What `plugtrain sweep` decides before it trains anything, wherever the trials then run (here,
// N at a time, or as a Slurm job array): every trial validated, the rung schedule, how many run
// at a time on which devices; and, whenever it is asked, which trials to train next and how far.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "config/experiment.h"
#include "sweep/rung_scheduler.h"
#include "sweep/sweep_runner.h"
#include "sweep/sweep_spec.h"
#include "sweep/trial_files.h"
#include "train/callbacks/plugin_loggers.h"

namespace plugtrain {

struct SweepSetup {
  SweepSpec spec;
  std::vector<Trial> trials;
  Experiment base;                  // the experiment with the sweep's --set, before any trial's values
  std::filesystem::path folder;     // <output>/<name>/sweep
  RungSchedule schedule;            // kind none: every trial to its last epoch
  int jobs = 1;                     // trials at a time here
  int threads = 0;                  // intra-op threads per trial (0: the trial decides)
  std::string device_variable;      // set: each trial here gets its own device through it
  std::vector<std::string> device_ids;  // what the variable is set to, per job slot
  std::vector<NamedLogger> loggers;     // the experiment's loggers, for the sweep's own run (sweep/sweep_loggers.h)
};

// Reads the [sweep] table, checks every trial (ConfigError naming the first bad one), and
// decides jobs, threads and devices for a sweep run here.
SweepSetup prepare_sweep(const SweepRequest& request);

// One piece of work: train `trial` until `until_epoch` (then pause; max_epochs or 0: to its end).
struct TrialWork {
  std::size_t trial = 0;
  std::int64_t until_epoch = 0;
};

std::vector<TrialFiles> read_trials(const SweepSetup& setup);

// What to train next, from the trials' files: every unfinished trial to its end, or, with a
// scheduler, the trials below their rung. keep_failures: a trial whose last attempt failed is
// not retried (a sweep continuing by itself); false retries it (a person started the command).
std::vector<TrialWork> next_work(const SweepSetup& setup, const std::vector<TrialFiles>& files, bool keep_failures);

// The `plugtrain run` command line of a piece of work (--resume auto: it continues whatever the
// trial's files hold). `threads_argument`: the value of train.threads, "" for none.
std::vector<std::string> trial_command(const SweepRequest& request, const SweepSetup& setup, const TrialWork& work,
                                       const std::string& threads_argument);

// trials.json in the sweep folder: the trials' names and labels and the schedule, so that
// `sweep --status` and `report` read a sweep without its experiment file.
void write_sweep_manifest(const SweepSetup& setup, const SweepRequest& request);

struct SweepManifest {
  std::filesystem::path experiment;
  std::vector<std::string> names, labels;
  RungSchedule schedule;
};
// nullopt when the folder holds no trials.json; Error when it cannot be read.
std::optional<SweepManifest> read_sweep_manifest(const std::filesystem::path& sweep_folder);

}  // namespace plugtrain
