// The small classification run that end-to-end tests build on: an MLP on 800 synthetic 8x8
// samples of 4 classes (200 test), batches of 50, SGD with momentum, 3 epochs, no step logging.
// Every machine trains it in seconds; `name` is its [experiment] name (its runs/<name>/ folder).
#pragma once

#include <string>

namespace plugtrain::testing {

inline std::string synthetic_experiment(const std::string& name) {
  return "\n[experiment]\nname = \"" + name + R"("
seed = 7

[model]
name = "mlp"
hidden = [32]

[data]
dataset = "synthetic"
synthetic_shape = [1, 8, 8]
synthetic_classes = 4
synthetic_train_size = 800
synthetic_test_size = 200
batch_size = 50

[optim]
name = "sgd"
lr = 0.1
momentum = 0.9

[train]
epochs = 3
log_interval = 0
)";
}

}  // namespace plugtrain::testing
