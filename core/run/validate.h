// Stage 1 of a run: everything the user gave is checked before any work starts. Its jobs, each
// in a file of its own (run/validate_jobs.h): parse the TOML (keys, types, ranges), apply the
// overrides, start the plugin host, look up the model, data set and task with their own
// options, cross-check them (targets, monitored metrics, augmentations, recipe, the data
// folder), make the loggers, and find where the weights start ([model] init, the checkpoint a
// resume names). The Experiment it returns is what the user wrote and is never changed
// afterwards.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "config/experiment.h"
#include "config/experiment_loader.h"
#include "plugins/plugin_host.h"
#include "run/run_data.h"
#include "run/run_loggers.h"
#include "run/run_request.h"
#include "task/task_registry.h"

namespace plugtrain {

struct ValidatedRun {
  ExperimentFile file;  // where each key came from, for messages
  Experiment experiment;
  std::shared_ptr<PluginHost> host;  // shared: a command may plan several runs on one host
  const RegisteredModel* model = nullptr;
  const TaskDefinition* task = nullptr;     // [task] name; its options are in experiment.task.options
  // data.dataset, as a plugin registers it (the bundled datasets plugin included); its options
  // are in experiment.data.dataset_options. Null only where a caller builds a run by hand.
  const RegisteredDataset* dataset = nullptr;
  std::filesystem::path resume_from;  // empty: a fresh start
  std::string resume_record;          // the resolved experiment stored in that checkpoint
  // The data set, read once by the first stage that needs it (run/run_data.h). Null only
  // where a caller builds a run by hand: the build then reads the data itself.
  std::shared_ptr<RunData> data;
  // The loggers on (experiment.logging names them), made and waiting for the run's start.
  std::vector<NamedLogger> loggers;
  // What the command asked beyond the experiment (run/run_request.h has each one's meaning).
  bool measure_again = false;                // select = "fastest": time the backends again
  std::int64_t stop_after_epoch = 0;         // a sweep rung's pause
  bool finished_checkpoint_is_done = false;  // --resume auto of an ended run trains nothing
};

// Throws ConfigError (exit 2) for a bad experiment, another Error for a bad checkpoint.
ValidatedRun validate(const RunRequest& request);

// Makes the tasks the host's plugins registered known to find_task (task/task_registry.h).
void adopt_plugin_tasks(const PluginHost& host);

}  // namespace plugtrain
