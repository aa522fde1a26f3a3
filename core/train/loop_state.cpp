#include "train/loop_state.h"

namespace plugtrain {

std::optional<double> EpochMetrics::metric(Metric name) const {
  switch (name) {
    case Metric::train_loss: return train_loss;
    case Metric::train_accuracy: return train_accuracy;
    case Metric::test_loss: return test_loss;
    case Metric::test_accuracy: return test_accuracy;
  }
  return test_accuracy;
}

}  // namespace plugtrain
