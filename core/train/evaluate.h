// The loss and the task's metrics of the model on a data set, through the run's strategy: with
// ddp each rank evaluates its share and every rank gets the figures of the whole set; with dp
// each batch is split over the replicas.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "task/task.h"
#include "train/device_context.h"

namespace plugtrain {

class Model;
class Precision;
class TrainingStrategy;

struct Evaluation {
  double loss = 0;
  std::vector<MetricValue> metrics;    // the task's evaluation metrics, headline first
  std::vector<MetricValue> per_class;  // each class's figures ("accuracy/<class>")
  std::int64_t samples = 0;            // evaluated (over every process)
};

// What an evaluation does beyond the run's own (`plugtrain evaluate`); the defaults are the run's.
struct EvaluateOptions {
  // Test-time augmentation: each batch also through the model mirrored left to right (the last
  // dimension of N,C,H,W inputs), the two outputs averaged as flip_averaged says.
  bool flip = false;
  // Called with each batch's outputs (float32, what the task's loss and metrics read, after any
  // averaging) and its targets, both on the device. Empty: none.
  std::function<void(const at::Tensor& outputs, const at::Tensor& targets)> on_batch;
};

Evaluation evaluate(Model& model, TrainingStrategy& strategy, const Task& task, const data::Dataset& dataset,
                    std::int64_t batch_size, const DeviceContext& device, const Precision& precision);
Evaluation evaluate(Model& model, TrainingStrategy& strategy, const Task& task, const data::Dataset& dataset,
                    std::int64_t batch_size, const DeviceContext& device, const Precision& precision,
                    const EvaluateOptions& options);

// The outputs for a batch and for its mirror image as one output of the same form, for a task
// learning `kind`:
//   class_index  log of the mean of the two softmax probabilities (so the task's cross-entropy
//                is the averaged prediction's and its argmax the averaged vote)
//   pixel_class  the same per pixel, the mirrored map flipped back first
//   multi_hot, real  the mean of the raw outputs (logits; predicted values)
// A sequence is refused (Error): mirrored, its order reverses.
at::Tensor flip_averaged(const at::Tensor& outputs, const at::Tensor& mirrored_outputs, DatasetTargets kind);

}  // namespace plugtrain
