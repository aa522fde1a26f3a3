// `plugtrain evaluate`: a trained model's loss and its task's metrics on one split of its data,
// computed by the run's own stages (validate, plan, build) and its own evaluation, so the
// figures are those the run printed for the same weights and split. For a classification it
// also counts the confusion matrix and writes it with each class's figures.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "task/task.h"
#include "use/confusion.h"
#include "use/trained_run.h"

namespace plugtrain {

enum class Split { test, val, train };
const char* split_name(Split split);

struct EvaluateRequest {
  TrainedRunRequest source;
  Split split = Split::test;
  // --tta flip: each batch's outputs averaged with its mirror image's (train/evaluate.h,
  // flip_averaged: probabilities for classes, raw outputs for values and labels).
  bool flip = false;
  // Where a classification's files go; empty: <run folder>/evaluate/<split> when a run folder
  // was given, else <checkpoint folder>/evaluate-<checkpoint name>/<split> ("<split>-tta-flip"
  // with --tta flip).
  std::filesystem::path out;
};

struct EvaluateResult {
  std::filesystem::path weights;  // the checkpoint (or state_dict) evaluated
  Split split = Split::test;
  bool flip = false;
  std::string task;
  std::int64_t samples = 0;
  double loss = 0;
  std::vector<MetricValue> metrics;    // the task's, headline first
  std::vector<MetricValue> per_class;  // the task's figures per class ("accuracy/<class>")
  std::vector<ClassFigures> classes;   // a classification's precision, recall, F1, support; else empty
  std::filesystem::path out;           // where its files were written; empty: none
  double seconds = 0;                  // the evaluation itself
};

// `log`: the plan's and the build's lines, as a run prints them.
EvaluateResult evaluate_run(const EvaluateRequest& request, std::ostream& log);

// "test loss 0.2981 acc 0.8941 top5 0.9971 | 10000 samples | 1.2 s": the epoch line's form.
std::string evaluation_line(const EvaluateResult& result);

// One JSON object: weights, split, tta, samples, loss, metrics {name: value}, per_class
// {class: {figure: value}}, seconds, out.
std::string evaluation_json(const EvaluateResult& result);

}  // namespace plugtrain
