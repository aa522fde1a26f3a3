// The jobs of validation (run/validate.h), in the order validate() does them, each in the file
// its name gives. Internal to core/run: callers use validate().
#pragma once

#include <memory>

#include "run/validate.h"

namespace plugtrain {

// validate_parse.cpp — parse: the TOML file (or the request's text); a [sweep] table only in a sweep trial.
ExperimentFile parse_request_file(const RunRequest& request);
// validate_parse.cpp — overrides: --set on the file, then the experiment resolved from it with
// what the request sets on top (use_trained, --profile, --profile-steps).
Experiment resolve_with_overrides(ExperimentFile& file, const RunRequest& request);

// validate_plugins.cpp — plugins: the host, searching the command line's and the experiment's paths.
std::shared_ptr<PluginHost> start_plugin_host(const RunRequest& request, const Experiment& e);
// validate_plugins.cpp — lookups: the model, the data set and the task the experiment names,
// the model's and the data set's options resolved against their rules.
void look_up_model(ValidatedRun& v, Experiment& e);
void look_up_dataset(ValidatedRun& v, Experiment& e);
void look_up_task(ValidatedRun& v, const Experiment& e);
void resolve_task_options(const ValidatedRun& v, Experiment& e);

// validate_checks.cpp — cross-checks: the data set's targets, the model and the task fit together.
void check_parts_fit(const ValidatedRun& v);
// validate_checks.cpp — cross-checks of the experiment against its task and data set: monitored
// metrics, augmentations, the recipe, label noise, data.path (unless the request reads no data),
// normalisation.
void cross_check_experiment(const ValidatedRun& v, const Experiment& e, const RunRequest& request);

// validate_start.cpp — where the weights start: [model] init names a state_dict that exists.
void check_model_init(const ExperimentFile& file, const Experiment& e);
// validate_start.cpp — resume: the checkpoint the request names (resume_from, resume_record),
// written for this model.
void find_resume(ValidatedRun& v, const Experiment& e, const RunRequest& request);

}  // namespace plugtrain
