#include "train/loop_state.h"

namespace plugtrain {

std::optional<double> EpochMetrics::metric(const std::string& name) const {
  if (name == "train_loss") return train_loss;
  if (name == "train_accuracy") return train_accuracy;
  if (name == "test_loss") return test_loss;
  return test_accuracy;
}

}  // namespace plugtrain
