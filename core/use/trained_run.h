// A trained model brought back to use it (`plugtrain evaluate`, `plugtrain predict`): what the
// user pointed at — a run's folder, a checkpoint, or a Python state_dict with its experiment —
// turned into the weights to load and the experiment they were trained with, validated and
// planned by the run's own stages for one process on one device.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include <c10/core/MemoryFormat.h>

#include "plugtrain/model.h"
#include "data/dataset.h"
#include "run/plan.h"
#include "run/validate.h"
#include "task/task.h"

namespace plugtrain {

// Where a trained model's files are.
struct TrainedFiles {
  // The run's folder (experiment.toml, normalization.json, classes.json, checkpoints/); empty
  // when the weights are not in one.
  std::filesystem::path run_folder;
  std::filesystem::path weights;  // a .ckpt, or a torch.save state_dict; a run folder's: plan_trained_run finds it
  bool state_dict = false;        // weights is a Python state_dict, not a plugtrain checkpoint
  // The experiment: this file, or (empty) the record the checkpoint stores.
  std::filesystem::path experiment_file;
};

// `given`: a run folder (its best.ckpt when there is one, else last.ckpt), a checkpoint, or a
// state_dict (which needs `experiment`). `experiment`, when set, is read instead of the run's or
// the checkpoint's own. Throws Error (one line naming the path) for anything else.
TrainedFiles find_trained_files(const std::filesystem::path& given, const std::filesystem::path& experiment);

struct TrainedRunRequest {
  std::filesystem::path given;       // as for find_trained_files
  std::filesystem::path experiment;  // --experiment
  std::vector<std::string> overrides;  // --set, as `plugtrain run` takes them
  std::vector<std::filesystem::path> plugin_paths;
  bool data_not_read = false;  // predict: the data set is not read, data.path is not checked
};

struct TrainedRun {
  TrainedFiles files;
  ValidatedRun run;
  RunPlan plan;
};

// The experiment validated (with the overrides) and planned as one process on one device, the
// backend chosen as the experiment says; what only training needs (recorded steps, the
// profiler, data kept on the device, a timed choice of backend) turned off.
TrainedRun plan_trained_run(const TrainedRunRequest& request);
// The same for files already found (find_trained_files of request.given and .experiment).
TrainedRun plan_trained_run(const TrainedRunRequest& request, TrainedFiles files);

// The weights the run evaluated with into `model` (built for the run, on `device`): a
// checkpoint's EMA weights when the experiment averaged them and evaluated the average
// (train.ema_decay > 0 with train.ema_evaluate), else its model weights; a state_dict as it is.
void load_trained_weights(const TrainedFiles& files, const Experiment& e, Model& model, c10::Device device);

// The run's task and model, as build_run makes them, for samples shaped like `like` (a data set of
// the run's sample shape and classes: predict's images, generate's one window; not its data), on
// the plan's device with the run's device settings and the weights it evaluated with. Logs the
// "model: ..." line.
struct TrainedModel {
  std::shared_ptr<Task> task;
  std::shared_ptr<Model> model;
  at::MemoryFormat memory_format = at::MemoryFormat::Contiguous;  // the batches the model wants
};
TrainedModel build_trained_model(const TrainedRun& t, const data::Dataset& like, std::ostream& log);

}  // namespace plugtrain
