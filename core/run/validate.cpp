#include "run/validate.h"

#include "config/config_error.h"
#include "config/suggest.h"
#include "run/run_folder.h"
#include "checkpoint/checkpoint.h"
#include "util/text.h"

namespace plugtrain {

namespace {

const RegisteredModel& find_model(const PluginHost& host, const ExperimentFile& file, const Experiment& e) {
  if (const RegisteredModel* m = host.models().find(e.model.name)) return *m;
  std::vector<std::string> names;
  for (const auto& m : host.models().all()) names.push_back(m.spec.name);
  // A models plugin that failed to load may be the one that has it: say so.
  std::string failures;
  for (const std::string& f : host.load_failures("models")) failures += "; " + f;
  throw ConfigError(key_location(file, "model.name") + ": unknown model '" + e.model.name + "'" + did_you_mean(e.model.name, names) +
                    "; available: " + join(names, ", ", "none (no models plugin loaded, see `plugtrain plugins`)") +
                    failures);
}

void check_data_path(const ExperimentFile& file, const Experiment& e) {
  if (e.data.dataset == DatasetKind::synthetic) return;
  const bool archive_ok = e.data.dataset == DatasetKind::cifar10 || e.data.dataset == DatasetKind::cifar100;  // the official .tar.gz as is
  if (std::filesystem::is_directory(e.data.path) || (archive_ok && std::filesystem::is_regular_file(e.data.path)))
    return;
  throw ConfigError(key_location(file, "data.path") + ": data.path '" + e.data.path + "' does not exist or is not a " +
                    (archive_ok ? "folder or archive" : "folder") +
                    (e.data.path == "/usr/share/datasets/fashion-mnist"
                         ? (e.data.dataset == DatasetKind::fashion_mnist ? " (install the Debian package dataset-fashion-mnist)"
                                                         : " (set data.path to the " + std::string(word_of(e.data.dataset)) + " files)")
                         : ""));
}

// data.mean and data.std come together, one value per channel, std > 0, and not with
// normalize = "none".
void check_normalization(const ExperimentFile& file, const Experiment& e) {
  if (e.data.mean.empty() && e.data.std.empty()) return;
  const std::string at = key_location(file, e.data.mean.empty() ? "data.std" : "data.mean");
  if (e.data.mean.size() != e.data.std.size())
    throw ConfigError(at + ": data.mean and data.std need the same number of values (one per channel), got " +
                      std::to_string(e.data.mean.size()) + " and " + std::to_string(e.data.std.size()));
  if (e.data.normalize == Normalize::none)
    throw ConfigError(at + ": data.mean and data.std are given but data.normalize is \"none\"");
  for (double s : e.data.std)
    if (!(s > 0)) throw ConfigError(key_location(file, "data.std") + ": every data.std value must be > 0");
}

}  // namespace

ValidatedRun validate(const RunRequest& request) {
  ValidatedRun v;
  v.file = parse_experiment_file(request.experiment_file);
  if (v.file.table.contains("sweep") && !request.sweep_trial)
    throw ConfigError(key_location(v.file, "sweep") + ": this file has a [sweep] table: run it with `plugtrain sweep " +
                      v.file.source + "` (or remove the table to train one run)");
  for (const auto& o : request.overrides) apply_override(v.file, o);
  Experiment e = resolve_experiment(v.file);

  SearchOptions search;
  search.cli_paths = request.plugin_paths;
  for (const auto& p : e.plugins.paths) search.experiment_paths.emplace_back(p);
  v.host = std::make_shared<PluginHost>(search);
  v.model = &find_model(*v.host, v.file, e);
  e.model.options = resolve_model_options(v.file, v.model->spec, v.model->rules);
  check_data_path(v.file, e);
  check_normalization(v.file, e);
  if (!e.model.init.empty() && !std::filesystem::is_regular_file(e.model.init))
    throw ConfigError(key_location(v.file, "model.init") + ": model.init '" + e.model.init + "' does not exist");
  if (!e.model.init.empty() && is_plugtrain_checkpoint(e.model.init))
    throw ConfigError(key_location(v.file, "model.init") + ": model.init '" + e.model.init +
                      "' is a plugtrain checkpoint, not a state_dict: continue it with --resume " + e.model.init +
                      ", or start from its weights after `plugtrain export " + e.model.init + " model.pt`");
  if (request.resume.requested()) {
    v.resume_from = resume_checkpoint(e, request.resume);
  }
  if (!v.resume_from.empty()) {
    const CheckpointContent info = read_checkpoint_info(v.resume_from);
    if (info.model_name != e.model.name)
      throw CheckpointError(v.resume_from.string() + ": written for model '" + info.model_name +
                            "', this experiment trains '" + e.model.name + "'");
    v.resume_record = info.experiment_json;
  }
  v.experiment = std::move(e);
  v.request = request;
  return v;
}

}  // namespace plugtrain
