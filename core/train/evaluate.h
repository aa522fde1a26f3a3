// The loss and the task's metrics of the model on a data set, through the run's strategy: with
// ddp each rank evaluates its share and every rank gets the figures of the whole set; with dp
// each batch is split over the replicas.
#pragma once

#include <cstdint>
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
};

Evaluation evaluate(Model& model, TrainingStrategy& strategy, const Task& task, const data::Dataset& dataset,
                    std::int64_t batch_size, const DeviceContext& device, const Precision& precision);

}  // namespace plugtrain
