#include "config/config_error.h"
#include "run/validate_jobs.h"

namespace plugtrain {

namespace {

// RunRequest::use_trained.
void keep_to_using_trained_weights(Experiment& e) {
  e.backend.devices = 1;
  e.backend.strategy = RunStrategy::single;
  e.backend.select = BackendSelect::priority;
  e.train.graphs = false;
  e.train.profile = false;
  e.data.on_device = false;
  e.model.init.clear();
}

}  // namespace

ExperimentFile parse_request_file(const RunRequest& request) {
  ExperimentFile file = request.experiment_text.empty()
                            ? parse_experiment_file(request.experiment_file)
                            : parse_experiment_text(request.experiment_text, request.experiment_file.string());
  if (file.table.contains("sweep") && !request.sweep_trial)
    throw ConfigError(key_location(file, "sweep") + ": this file has a [sweep] table: run it with `plugtrain sweep " +
                      file.source + "` (or remove the table to train one run)");
  return file;
}

Experiment resolve_with_overrides(ExperimentFile& file, const RunRequest& request) {
  for (const auto& o : request.overrides) apply_override(file, o);
  Experiment e = resolve_experiment(file);
  if (request.use_trained) keep_to_using_trained_weights(e);
  if (request.profile) e.train.profile = true;
  if (request.profile_steps > 0) e.train.profile_steps = request.profile_steps;
  return e;
}

}  // namespace plugtrain
