// The [sweep] table of an experiment file: which keys vary and how, expanded into trials.
//
//   [sweep]
//   optim.name = ["sgd", "adam"]          # a key path with a list: one axis of the grid
//   "data.label_noise" = [0.0, 0.2]       # quoted key paths are the same
//   repeat_seeds = [1, 2, 3]              # shorthand for experiment.seed = [1, 2, 3]
//   method = "grid"                       # the product (default), or "random"
//   samples = 20                          # random: how many trials (also: trials)
//   seed = 0                              # random: the draws' seed
//   optim.lr = { log_uniform = [1e-4, 1e-1] }   # random: also uniform, int, choice = [...]
//   scheduler = "asha"                    # early stopping of trials (sweep/rung_scheduler.h)
//   nodes = 2                             # --slurm: each trial an array task over 2 nodes, ddp
//   tasks_per_node = 1                    #   across them (ranks per node; 1 by default)
//   [sweep.when."optim.name=sgd"]         # overrides for the trials where optim.name is sgd
//   optim.momentum = 0.9
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/choices.h"
#include "config/experiment.h"
#include "config/experiment_loader.h"
#include "plugins/model_catalog.h"
#include "sweep/rung_scheduler.h"

namespace plugtrain {

// One trial: key path -> value as TOML text ("0.1", "\"sgd\""), in the order of the axes,
// then the `when` overrides that apply.
struct Trial {
  std::vector<std::pair<std::string, std::string>> overrides;
  std::string name;  // folder name: the overrides that vary, safe for a file system
  std::int64_t draw = 0;  // random: the number of the draw (1-based); 0 in a grid
  std::vector<std::string> set_arguments() const;  // "key=value" for --set
  std::string label() const;                       // "optim.name=sgd, experiment.seed=1"
};

// [sweep] scheduler and its keys as the file gives them; "auto" values are nullopt until
// resolve_rung_schedule() reads them from the experiment.
struct SchedulerRequest {
  SweepScheduler kind = SweepScheduler::none;
  std::optional<std::string> metric;  // nullopt: checkpoint.monitor
  std::optional<Direction> mode;    // nullopt: checkpoint.mode, else by the metric
  std::int64_t min_epochs = 1;
  std::optional<std::int64_t> max_epochs;  // nullopt: train.epochs
  std::int64_t reduction_factor = 3;
  std::optional<std::int64_t> brackets;    // hyperband; nullopt: every bracket there is
  std::string where;  // file:line:col of the scheduler key, for messages
  std::string metric_where;  // and of the metric key
};

struct SweepSpec {
  SweepMethod method = SweepMethod::grid;
  std::int64_t trials = 0;  // random
  std::int64_t seed = 0;    // random
  std::vector<std::string> repeat_seeds;  // random: every drawn trial once per seed
  std::vector<Trial> expand() const;  // sweep/sweep_trials.cpp

  struct Axis {
    std::string key;
    std::vector<std::string> values;  // TOML text; grid, or random's list to draw from
    std::optional<Distribution> distribution;  // random: a range to draw from; nullopt: the values
    double low = 0, high = 0;
    std::uint32_t line = 0, column = 0;  // where the file lists it
  };
  std::vector<Axis> axes;
  struct When {
    std::string key, value;  // the trial's value of key, as TOML text
    std::vector<std::pair<std::string, std::string>> overrides;
  };
  std::vector<When> when;
  SchedulerRequest scheduler;
  // [sweep] nodes: each trial trains across this many Slurm nodes, tasks_per_node ranks on each
  // (0: not given, a trial is one process). Only a sweep on Slurm has nodes to give.
  std::int64_t nodes = 0;
  std::int64_t tasks_per_node = 1;
  std::string nodes_where;  // file:line:col of sweep.nodes, for messages
};

// True when the file has a [sweep] table.
bool has_sweep(const ExperimentFile& file);

// Reads [sweep]; every problem is a ConfigError naming file:line:col.
SweepSpec read_sweep(const ExperimentFile& file);

// The keys of [sweep] that belong to the scheduler (sweep/rung_schedule_spec.cpp).
bool is_scheduler_key(const std::string& key);
void read_scheduler(const ExperimentFile& file, const toml::table& sweep, SchedulerRequest& out);
// The scheduler with the experiment's defaults filled in and checked; ConfigError when wrong.
// `dataset` (may be null): the data set's registration, which says whether it has its own
// validation split to rank by.
RungSchedule resolve_rung_schedule(const SchedulerRequest& request, const Experiment& base,
                                   const RegisteredDataset* dataset);

// "\"sgd\"" -> "sgd": a value of a trial as a person reads it.
std::string plain_value(const std::string& toml_text);

}  // namespace plugtrain
