// lenet5: conv1 (6, 5x5, padding 2) -> act -> avgpool 2 -> conv2 (16, 5x5) -> act -> avgpool 2
// -> fc1 (120) -> act -> fc2 (84) -> act -> fc3 (classes). 28x28 and 32x32 inputs both work;
// the flattened size follows the input.
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include "models.h"

namespace plugtrain::models {

namespace {

// Spatial size after conv1 (same) -> pool 2 -> conv2 (5x5, valid) -> pool 2.
std::int64_t lenet_out(std::int64_t n) { return (n / 2 - 4) / 2; }

class LeNet5 final : public TensorModel {
 public:
  LeNet5(const std::vector<std::int64_t>& shape, std::int64_t classes, Activation activation)
      : activation_(activation) {
    conv1_ = register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(shape[0], 6, 5).padding(2)));
    conv2_ = register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(6, 16, 5)));
    fc1_ = register_module("fc1", torch::nn::Linear(16 * lenet_out(shape[1]) * lenet_out(shape[2]), 120));
    fc2_ = register_module("fc2", torch::nn::Linear(120, 84));
    fc3_ = register_module("fc3", torch::nn::Linear(84, classes));
  }

  torch::Tensor forward(torch::Tensor x) override {
    x = torch::avg_pool2d(activate(activation_, conv1_->forward(x)), {2, 2});
    x = torch::avg_pool2d(activate(activation_, conv2_->forward(x)), {2, 2});
    x = activate(activation_, fc1_->forward(x.flatten(1)));
    x = activate(activation_, fc2_->forward(x));
    return fc3_->forward(x);
  }

 private:
  Activation activation_;
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr}, fc3_{nullptr};
};

std::shared_ptr<Model> make_lenet5(const ModelInputs& inputs, const Options& options) {
  check_inputs("lenet5", inputs);
  const Activation activation = parse_activation("lenet5", options.string("activation"), {"relu", "tanh"});
  const auto& s = inputs.input_shape;
  if (s[1] < 12 || s[2] < 12)
    fail("lenet5", "input must be at least 12x12 (got " + std::to_string(s[1]) + "x" + std::to_string(s[2]) + ")");
  return std::make_shared<LeNet5>(s, inputs.num_classes, activation);
}

}  // namespace

ModelSpec lenet5_spec() {
  return {"lenet5",
          "LeNet-5: two conv + average-pool blocks, dense layers of 120 and 84 units",
          {
              {"activation", OptionType::string, std::string("relu"), "relu or tanh"},
          },
          make_lenet5,
          /*batch_factory=*/{},
          per_sample_targets()};
}

std::vector<OptionRule> lenet5_rules() { return {OptionRule("activation").one_of({"relu", "tanh"})}; }

}  // namespace plugtrain::models
