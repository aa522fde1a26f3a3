// convnet: the two-convolution network of the Fashion-MNIST benchmark table (TensorFlow
// tutorial CNN): conv1 -> relu -> maxpool 2 -> conv2 -> relu -> maxpool 2 -> flatten ->
// fc1 -> relu -> dropout -> fc2. Convolutions keep the spatial size (padding k/2).
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>

#include "models.h"

namespace plugtrain::models {

namespace {

class ConvNet final : public TensorModel {
 public:
  ConvNet(const std::vector<std::int64_t>& shape, std::int64_t classes, std::int64_t c1, std::int64_t c2,
          std::int64_t kernel, std::int64_t hidden, double dropout) {
    const std::int64_t pad = kernel / 2;
    conv1_ = register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(shape[0], c1, kernel).padding(pad)));
    conv2_ = register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(c1, c2, kernel).padding(pad)));
    const std::int64_t flat = c2 * (shape[1] / 4) * (shape[2] / 4);
    fc1_ = register_module("fc1", torch::nn::Linear(flat, hidden));
    dropout_ = register_module("dropout", torch::nn::Dropout(dropout));
    fc2_ = register_module("fc2", torch::nn::Linear(hidden, classes));
  }

  torch::Tensor forward(torch::Tensor x) override {
    // relu in place on each layer's fresh output (a convolution's and a linear layer's
    // backward need only their inputs).
    x = torch::max_pool2d(conv1_->forward(x).relu_(), {2, 2});
    x = torch::max_pool2d(conv2_->forward(x).relu_(), {2, 2});
    x = dropout_->forward(fc1_->forward(x.flatten(1)).relu_());
    return fc2_->forward(x);
  }

 private:
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
};

std::shared_ptr<Model> make_convnet(const ModelInputs& inputs, const Options& options) {
  check_inputs("convnet", inputs);
  const auto& channels = options.integers("channels");
  if (channels.size() != 2)
    fail("convnet", "channels must have exactly 2 entries (got " + std::to_string(channels.size()) + ")");
  if (channels[0] <= 0 || channels[1] <= 0) fail("convnet", "channels must be > 0");
  const std::int64_t kernel = options.integer("kernel_size");
  if (kernel <= 0 || kernel % 2 == 0)
    fail("convnet", "kernel_size must be odd and > 0 (got " + std::to_string(kernel) + ")");
  const std::int64_t hidden = options.integer("hidden");
  if (hidden <= 0) fail("convnet", "hidden must be > 0 (got " + std::to_string(hidden) + ")");
  const double dropout = options.real("dropout");
  check_dropout("convnet", dropout);
  const auto& s = inputs.input_shape;
  if (s[1] < 4 || s[2] < 4)
    fail("convnet", "input must be at least 4x4 for two 2x2 poolings (got " + std::to_string(s[1]) + "x" +
                        std::to_string(s[2]) + ")");
  return std::make_shared<ConvNet>(s, inputs.num_classes, channels[0], channels[1], kernel, hidden, dropout);
}

}  // namespace

ModelSpec convnet_spec() {
  return {"convnet",
          "Two conv + max-pool blocks, a hidden dense layer with dropout (TensorFlow tutorial CNN)",
          {
              {"channels", OptionType::integer_list, std::vector<std::int64_t>{32, 64},
               "output channels of conv1 and conv2 (exactly 2)"},
              {"kernel_size", OptionType::integer, std::int64_t{5}, "odd convolution kernel size (same padding)"},
              {"hidden", OptionType::integer, std::int64_t{1024}, "width of the dense layer fc1"},
              {"dropout", OptionType::real, 0.4, "dropout after fc1, in [0, 1)"},
          },
          make_convnet,
          /*batch_factory=*/{},
          per_sample_targets()};
}

std::vector<OptionRule> convnet_rules() {
  return {OptionRule("channels").at_least(1).length(2, 2), OptionRule("kernel_size").at_least(1),
          OptionRule("hidden").at_least(1), OptionRule("dropout").at_least(0).below(1)};
}

}  // namespace plugtrain::models
