// mlp: flatten -> (Linear -> activation -> dropout) per hidden size -> Linear to the classes.
// Layers are fc1..fcN, as in a Python module with self.fc1 = nn.Linear(...).
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>

#include "models.h"

namespace plugtrain::models {

namespace {

class Mlp final : public TensorModel {
 public:
  Mlp(std::int64_t in_features, const std::vector<std::int64_t>& hidden, std::int64_t classes,
      double dropout, Activation activation)
      : activation_(activation) {
    std::int64_t width = in_features;
    std::vector<std::int64_t> sizes = hidden;
    sizes.push_back(classes);
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      layers_.push_back(register_module("fc" + std::to_string(i + 1), torch::nn::Linear(width, sizes[i])));
      width = sizes[i];
    }
    if (dropout > 0.0) dropout_ = register_module("dropout", torch::nn::Dropout(dropout));
  }

  torch::Tensor forward(torch::Tensor x) override {
    x = x.flatten(1);
    for (std::size_t i = 0; i + 1 < layers_.size(); ++i) {
      x = activate(activation_, layers_[i]->forward(x));
      if (dropout_) x = dropout_->forward(x);
    }
    return layers_.back()->forward(x);
  }

 private:
  Activation activation_;
  std::vector<torch::nn::Linear> layers_;
  torch::nn::Dropout dropout_{nullptr};
};

std::shared_ptr<Model> make_mlp(const ModelInputs& inputs, const Options& options) {
  check_inputs("mlp", inputs);
  const auto& hidden = options.integers("hidden");
  for (std::int64_t h : hidden)
    if (h <= 0) fail("mlp", "hidden sizes must be > 0 (got " + std::to_string(h) + ")");
  const double dropout = options.real("dropout");
  check_dropout("mlp", dropout);
  const Activation activation = parse_activation("mlp", options.string("activation"), {"relu", "gelu", "tanh"});
  const auto& s = inputs.input_shape;
  return std::make_shared<Mlp>(s[0] * s[1] * s[2], hidden, inputs.num_classes, dropout, activation);
}

}  // namespace

ModelSpec mlp_spec() {
  return {"mlp",
          "Multi-layer perceptron: flatten, fully connected hidden layers, linear classifier",
          {
              {"hidden", OptionType::integer_list, std::vector<std::int64_t>{256, 128},
               "hidden layer widths, in order (empty: a linear classifier)"},
              {"dropout", OptionType::real, 0.0, "dropout after each hidden activation, in [0, 1)"},
              {"activation", OptionType::string, std::string("relu"), "relu, gelu or tanh"},
          },
          make_mlp,
          /*batch_factory=*/{},
          per_sample_targets()};
}

std::vector<OptionRule> mlp_rules() {
  return {OptionRule("hidden").at_least(1), OptionRule("dropout").at_least(0).below(1),
          OptionRule("activation").one_of({"relu", "gelu", "tanh"})};
}

}  // namespace plugtrain::models
