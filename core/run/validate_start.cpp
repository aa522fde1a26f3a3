#include "checkpoint/checkpoint.h"
#include "config/config_error.h"
#include "run/run_folder.h"
#include "run/validate_jobs.h"

namespace plugtrain {

void check_model_init(const ExperimentFile& file, const Experiment& e) {
  if (e.model.init.empty()) return;
  if (!std::filesystem::is_regular_file(e.model.init))
    throw ConfigError(key_location(file, "model.init") + ": model.init '" + e.model.init + "' does not exist");
  if (is_plugtrain_checkpoint(e.model.init))
    throw ConfigError(key_location(file, "model.init") + ": model.init '" + e.model.init +
                      "' is a plugtrain checkpoint, not a state_dict: continue it with --resume " + e.model.init +
                      ", or start from its weights after `plugtrain export " + e.model.init + " model.pt`");
}

void find_resume(ValidatedRun& v, const Experiment& e, const RunRequest& request) {
  if (request.resume.requested()) v.resume_from = resume_checkpoint(e, request.resume);
  if (v.resume_from.empty()) return;
  const CheckpointContent info = read_checkpoint_info(v.resume_from);
  if (info.model_name != e.model.name)
    throw CheckpointError(v.resume_from.string() + ": written for model '" + info.model_name +
                          "', this experiment trains '" + e.model.name + "'");
  v.resume_record = info.experiment_json;
}

}  // namespace plugtrain
