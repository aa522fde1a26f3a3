#include "use/trained_run.h"

#include <ostream>
#include <system_error>

#include "checkpoint/checkpoint.h"
#include "run/build.h"
#include "run/build_task.h"
#include "run/device_settings.h"
#include "run/run_folder.h"
#include "util/error.h"

namespace plugtrain {

namespace fs = std::filesystem;

namespace {

// The checkpoint a run's figures come from, in `folder` (where its experiment keeps them):
// best.ckpt (checkpoint.save = "best") when the run wrote one, else last.ckpt, else the newest
// epoch-NNNN.ckpt.
fs::path run_checkpoint(const fs::path& run_folder, const fs::path& folder) {
  for (const char* name : {"best.ckpt", "last.ckpt"})
    if (fs::is_regular_file(folder / name)) return folder / name;
  fs::path newest;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("epoch-", 0) == 0 && entry.path().extension() == ".ckpt" && entry.path() > newest) newest = entry.path();
  }
  if (newest.empty())
    throw Error(run_folder.string() + ": the run has no checkpoint in " + folder.string() +
                " (best.ckpt or last.ckpt; checkpoint.save = \"none\" writes none)");
  return newest;
}

// runs/<name> instead of runs/<name>/version_N: its newest run, for the message.
std::string newest_version_hint(const fs::path& folder) {
  fs::path newest;
  int version = -1;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec))
    if (const int v = run_version(entry.path()); v > version && entry.is_directory()) {
      version = v;
      newest = entry.path();
    }
  return newest.empty() ? "" : " (its newest run is " + newest.string() + ")";
}

// A checkpoint in <run folder>/checkpoints/ belongs to that run: its statistics and classes.
fs::path run_folder_of_checkpoint(const fs::path& checkpoint) {
  const fs::path folder = checkpoint.parent_path();
  if (folder.filename() == "checkpoints" && fs::is_regular_file(folder.parent_path() / "experiment.toml"))
    return folder.parent_path();
  return {};
}

}  // namespace

TrainedFiles find_trained_files(const fs::path& given, const fs::path& experiment) {
  TrainedFiles f;
  f.experiment_file = experiment;
  std::error_code ec;
  if (fs::is_directory(given, ec)) {
    if (!fs::is_regular_file(given / "experiment.toml"))
      throw Error(given.string() + ": not a run folder (no experiment.toml)" + newest_version_hint(given) +
                      "; give a run's folder (runs/<name>/version_N), a .ckpt, or a state_dict with --experiment",
                  exit_bad_input);
    f.run_folder = given;  // its checkpoint: once the experiment says where (plan_trained_run)
    if (f.experiment_file.empty()) f.experiment_file = given / "experiment.toml";
    return f;
  }
  if (!fs::exists(given, ec))
    throw Error(given.string() + ": no such run folder, checkpoint or weights file", exit_bad_input);
  f.weights = given;
  if (is_plugtrain_checkpoint(given)) {
    f.run_folder = run_folder_of_checkpoint(given);
    return f;
  }
  if (experiment.empty())
    throw Error(given.string() + ": not a plugtrain checkpoint; a Python state_dict (torch.save) needs "
                "--experiment exp.toml to say which model it is",
                exit_bad_input);
  f.state_dict = true;
  return f;
}

TrainedRun plan_trained_run(const TrainedRunRequest& request) {
  return plan_trained_run(request, find_trained_files(request.given, request.experiment));
}

TrainedRun plan_trained_run(const TrainedRunRequest& request, TrainedFiles files) {
  RunRequest r;
  std::string checkpoint_model;
  if (!files.state_dict && !files.weights.empty()) {
    const CheckpointContent info = read_checkpoint_info(files.weights);
    checkpoint_model = info.model_name;
    if (files.experiment_file.empty()) r.experiment_text = info.experiment_json;
  }
  // The checkpoint's record is named by the checkpoint in messages.
  r.experiment_file = files.experiment_file.empty() ? files.weights : files.experiment_file;
  r.overrides = request.overrides;
  r.use_trained = true;  // one process on one device, nothing that only training needs
  r.plugin_paths = request.plugin_paths;
  r.sweep_trial = true;  // an experiment with a [sweep] table describes each trial's model too
  r.data_not_read = request.data_not_read;
  TrainedRun t{std::move(files), validate(r), RunPlan{}};
  if (t.files.weights.empty()) {  // a run folder: its checkpoint, where its experiment keeps them
    t.files.weights = run_checkpoint(t.files.run_folder, checkpoint_folder(t.run.experiment, t.files.run_folder));
    checkpoint_model = read_checkpoint_info(t.files.weights).model_name;
  }
  if (!checkpoint_model.empty() && checkpoint_model != t.run.experiment.model.name)
    throw CheckpointError(t.files.weights.string() + ": written for model '" + checkpoint_model +
                          "', the experiment describes '" + t.run.experiment.model.name + "'");
  t.plan = plan_run(t.run, run_trials(t.run, {}, std::nullopt), {}, std::nullopt);
  return t;
}

void load_trained_weights(const TrainedFiles& files, const Experiment& e, Model& model, c10::Device device) {
  if (files.state_dict)
    load_python_state_dict(files.weights, model);
  else
    load_checkpoint_weights(files.weights, model, device, /*ema=*/e.train.ema_decay > 0 && e.train.ema_evaluate);
}

TrainedModel build_trained_model(const TrainedRun& t, const data::Dataset& like, std::ostream& log) {
  const Experiment& e = t.run.experiment;
  std::ostream quiet(nullptr);
  TrainedModel out;
  out.task = build_task(*t.run.task, t.run, like, quiet);
  out.model = build_model(*t.run.model, model_description(like, out.task->model_outputs()), e);
  out.model->to(t.plan.device);
  out.memory_format = apply_device_settings(e, !t.plan.capabilities.host_cpu, *out.model).memory_format;
  load_trained_weights(t.files, e, *out.model, t.plan.device);
  log << "model: " << e.model.name << " from " << t.files.weights.string() << " on " << t.plan.device.str() << "\n";
  return out;
}

}  // namespace plugtrain
