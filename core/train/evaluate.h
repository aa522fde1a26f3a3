// Loss and accuracy of the model on a data set, through the run's strategy: with ddp each rank
// evaluates its share and every rank gets the figures of the whole set; with dp each batch is
// split over the replicas.
#pragma once

#include <cstdint>
#include <string>

#include "data/dataset.h"
#include "train/device_context.h"

namespace plugtrain {

class Model;
class Precision;
class TrainingStrategy;

struct Evaluation {
  double loss = 0, accuracy = 0;
};

Evaluation evaluate(Model& model, TrainingStrategy& strategy, const data::Dataset& dataset, std::int64_t batch_size,
                    const DeviceContext& device, const Precision& precision);

}  // namespace plugtrain
