#include "use/evaluate_run.h"

#include <chrono>
#include <cstdio>
#include <optional>
#include <ostream>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "config/config_error.h"
#include "data/image_codec.h"
#include "run/build.h"
#include "run/build_task.h"
#include "run/outputs.h"
#include "train/callbacks/console_log.h"
#include "train/evaluate.h"
#include "train/loop_config.h"
#include "train/precision.h"
#include "run/recipe_checks.h"
#include "util/atomic_file.h"
#include "util/clock.h"
#include "util/format.h"

namespace plugtrain {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void refuse_val_split() {
  throw ConfigError("--split val: this run has no validation split (its data.val_fraction is 0 and its data set has no "
                    "val split of its own); "
                    "use --split test or --split train");
}

const data::Dataset& split_of(const data::DatasetPair& data, Split split) {
  switch (split) {
    case Split::train: return data.train;
    case Split::test: return data.test;
    case Split::val: break;
  }
  if (!data.has_val()) refuse_val_split();
  return data.val;
}

fs::path default_out(const EvaluateRequest& request, const TrainedFiles& files) {
  const std::string split = std::string(split_name(request.split)) + (request.flip ? "-tta-flip" : "");
  if (!files.run_folder.empty() && fs::is_directory(request.source.given)) return files.run_folder / "evaluate" / split;
  return files.weights.parent_path() / ("evaluate-" + files.weights.stem().string()) / split;
}

// What a classification's evaluation keeps of each batch, on the device until the end.
struct ClassRecords {
  ConfusionCounter confusion;
  std::vector<at::Tensor> labels, predicted, probability;

  ClassRecords(std::int64_t classes, c10::Device device) : confusion(classes, device) {}
  void add(const at::Tensor& outputs, const at::Tensor& targets) {
    confusion.add(outputs, targets);
    const auto [top, index] = at::softmax(outputs, 1).max(1);
    labels.push_back(targets);
    predicted.push_back(index);
    probability.push_back(top);
  }
};

// predictions.csv: each sample of the split, in its order, with its label and the prediction.
void write_predictions_csv(const fs::path& file, const ClassRecords& r, const std::vector<ClassFigures>& classes) {
  std::string out = "index,label,label_name,predicted,predicted_name,probability\n";
  if (!r.labels.empty()) {
    const at::Tensor labels = at::cat(r.labels).to(at::kCPU, at::kLong).contiguous();
    const at::Tensor predicted = at::cat(r.predicted).to(at::kCPU, at::kLong).contiguous();
    const at::Tensor probability = at::cat(r.probability).to(at::kCPU, at::kDouble).contiguous();
    auto name = [&](std::int64_t k) {
      return k >= 0 && k < std::int64_t(classes.size()) ? csv_field(classes[std::size_t(k)].name) : std::string();
    };
    char figure[32];
    for (std::int64_t i = 0; i < labels.size(0); ++i) {
      const std::int64_t l = labels.data_ptr<std::int64_t>()[i], p = predicted.data_ptr<std::int64_t>()[i];
      std::snprintf(figure, sizeof figure, "%.6f", probability.data_ptr<double>()[i]);
      out += std::to_string(i) + "," + std::to_string(l) + "," + name(l) + "," + std::to_string(p) + "," + name(p) + "," +
             figure + "\n";
    }
  }
  write_file_atomically(file, out);
}

}  // namespace

const char* split_name(Split split) {
  switch (split) {
    case Split::test: return "test";
    case Split::val: return "val";
    case Split::train: return "train";
  }
  return "?";
}

EvaluateResult evaluate_run(const EvaluateRequest& request, std::ostream& log) {
  TrainedRun t = plan_trained_run(request.source);
  const Experiment& e = t.run.experiment;
  if (request.split == Split::val && !has_validation_split(e, t.run.dataset)) refuse_val_split();  // before any work is printed
  print_plan(t.plan, e, log);
  // Only the run's folder is named: build_run then normalises with the statistics the run
  // stored when it began (normalization.json), as the run did, and writes nothing (writes() is
  // false, and no file-writing callback is made without checkpoint and metrics paths).
  RunOutputs reads;
  reads.run_folder = t.files.run_folder;
  const std::unique_ptr<BuiltRun> built = build_run(t.run, t.plan, nullptr, t.files.run_folder.empty() ? nullptr : &reads, log);
  Model& model = *built->model;
  load_trained_weights(t.files, e, model, t.plan.device);
  const data::Dataset& dataset = split_of(built->data, request.split);

  // The run's task made again for its training set (built_run's is the Trainer's own).
  std::ostream quiet(nullptr);
  const std::shared_ptr<Task> task = build_task(*t.run.task, t.run, built->data.train, quiet);
  task->to(t.plan.device);
  // The batches as the run makes them: its device, loader and memory format (build_run applied
  // the device settings, and the model is in that format), from the host: the split asked for
  // may not be the one a device-resident set holds.
  DeviceContext device = built->trainer->device();
  device.train_on_device = device.test_on_device = device.val_on_device = nullptr;
  const Precision precision(e.train.precision, t.plan.device);

  EvaluateOptions options;
  options.flip = request.flip;
  std::optional<ClassRecords> records;
  if (task->target_kind() == DatasetTargets::class_index) {
    records.emplace(task->model_outputs(), t.plan.device);
    options.on_batch = [&records](const at::Tensor& outputs, const at::Tensor& targets) { records->add(outputs, targets); };
  }
  const auto start = std::chrono::steady_clock::now();
  const Evaluation ev = evaluate(model, built->trainer->strategy(), *task, dataset, loop_config(e).test_batch_size,
                                 device, precision, options);

  EvaluateResult r;
  r.seconds = seconds_since(start);
  r.weights = t.files.weights;
  r.split = request.split;
  r.flip = request.flip;
  r.task = task->name();
  r.samples = ev.samples;
  r.loss = ev.loss;
  r.metrics = ev.metrics;
  r.per_class = ev.per_class;
  if (!records) return r;
  const at::Tensor counts = records->confusion.counts();
  r.classes = class_figures(counts, built->data.train.class_names);
  r.out = request.out.empty() ? default_out(request, t.files) : request.out;
  fs::create_directories(r.out);
  write_confusion_csv(r.out / "confusion.csv", counts, r.classes);
  data::write_png_file(r.out / "confusion.png", confusion_image(counts, r.classes));
  write_class_figures_csv(r.out / "per_class.csv", r.classes);
  write_predictions_csv(r.out / "predictions.csv", *records, r.classes);
  return r;
}

std::string evaluation_line(const EvaluateResult& r) {
  std::string line = std::string(split_name(r.split)) + " loss " + fixed(r.loss, 4);
  for (const MetricValue& v : r.metrics) line += " " + short_metric_name(v.name) + " " + fixed(v.value, 4);
  return line + " | " + std::to_string(r.samples) + " samples | " + fixed(r.seconds, 1) + " s";
}

std::string evaluation_json(const EvaluateResult& r) {
  nlohmann::json metrics = nlohmann::json::object(), per_class = nlohmann::json::object();
  for (const MetricValue& v : r.metrics) metrics[v.name] = v.value;
  for (const ClassFigures& f : r.classes)
    per_class[f.name] = {{"precision", f.precision}, {"recall", f.recall}, {"f1", f.f1}, {"support", f.support}};
  // The task's own figures, "accuracy/<class>" (a class name may hold a '/'): under the class.
  for (const MetricValue& v : r.per_class)
    if (const std::size_t slash = v.name.find('/'); slash != std::string::npos)
      per_class[v.name.substr(slash + 1)][v.name.substr(0, slash)] = v.value;
  const nlohmann::json j = {{"weights", r.weights.string()},
                            {"split", split_name(r.split)},
                            {"tta", r.flip ? "flip" : "none"},
                            {"task", r.task},
                            {"samples", r.samples},
                            {"loss", r.loss},
                            {"metrics", metrics},
                            {"per_class", per_class},
                            {"seconds", r.seconds},
                            {"out", r.out.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.out.string())}};
  return j.dump(2);
}

}  // namespace plugtrain
