// vgg11_bn, vgg13_bn, vgg16_bn, vgg19_bn: torchvision's VGG with batch norm
// (torchvision/models/vgg.py, configurations A, B, D, E). Names and shapes are torchvision's:
//   features    Sequential; each conv entry adds three indices (Conv2d 3x3 pad 1 with bias,
//               BatchNorm2d, ReLU) and each "M" one (MaxPool2d 2/2), so vgg16_bn has
//               features.0 (conv), features.1 (bn), features.2 (relu), features.3 (conv), ...
//   avgpool     AdaptiveAvgPool2d
//   classifier  head imagenet: avgpool 7x7, Sequential 0 Linear(512*7*7, 4096), 1 ReLU,
//               2 Dropout, 3 Linear(4096, 4096), 4 ReLU, 5 Dropout, 6 Linear(4096, classes)
//               head cifar: avgpool 1x1, dropout (the option, unnamed) then classifier.0 =
//               Linear(512, classes) (the usual CIFAR VGG head)
//               head auto: cifar when H and W <= 64.
// Inputs must be at least 32x32 (five 2x2 poolings). Init as torchvision: convs Kaiming normal
// (fan_out, relu), BatchNorm 1 / 0, Linear N(0, 0.01) with zero bias.
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/pooling.h>

#include "blocks.h"

namespace plugtrain::models {

namespace {

constexpr std::int64_t M = 0;  // a max-pool entry in a configuration

std::vector<std::int64_t> vgg_config(int depth) {
  switch (depth) {
    case 11: return {64, M, 128, M, 256, 256, M, 512, 512, M, 512, 512, M};
    case 13: return {64, 64, M, 128, 128, M, 256, 256, M, 512, 512, M, 512, 512, M};
    case 16: return {64, 64, M, 128, 128, M, 256, 256, 256, M, 512, 512, 512, M, 512, 512, 512, M};
    case 19: return {64, 64, M, 128, 128, M, 256, 256, 256, 256, M, 512, 512, 512, 512, M, 512, 512, 512, 512, M};
    default: break;
  }
  throw std::logic_error("no vgg of depth " + std::to_string(depth));
}

class VggBn final : public TensorModel {
 public:
  VggBn(std::int64_t in_channels, std::int64_t classes, const std::vector<std::int64_t>& config, bool cifar,
        double dropout)
      : cifar_(cifar), dropout_(dropout) {
    std::int64_t c = in_channels;
    for (std::int64_t v : config) {
      if (v == M) {
        features_->push_back(torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2).stride(2)));
        continue;
      }
      features_->push_back(torch::nn::Conv2d(conv_options(c, v, 3, 1, 1, /*bias=*/true)));
      features_->push_back(torch::nn::BatchNorm2d(v));
      features_->push_back(torch::nn::ReLU(torch::nn::ReLUOptions(true)));
      c = v;
    }
    register_module("features", features_);
    const std::int64_t pool = cifar ? 1 : 7;
    avgpool_ = register_module("avgpool", torch::nn::AdaptiveAvgPool2d(torch::nn::AdaptiveAvgPool2dOptions(pool)));
    if (cifar) {
      classifier_->push_back(torch::nn::Linear(c, classes));
    } else {
      classifier_->push_back(torch::nn::Linear(c * 7 * 7, 4096));
      classifier_->push_back(torch::nn::ReLU(torch::nn::ReLUOptions(true)));
      classifier_->push_back(torch::nn::Dropout(dropout));
      classifier_->push_back(torch::nn::Linear(4096, 4096));
      classifier_->push_back(torch::nn::ReLU(torch::nn::ReLUOptions(true)));
      classifier_->push_back(torch::nn::Dropout(dropout));
      classifier_->push_back(torch::nn::Linear(4096, classes));
    }
    register_module("classifier", classifier_);
    init_like_torchvision(*this, /*linear_std=*/0.01);
  }

  torch::Tensor forward(torch::Tensor x) override {
    x = avgpool_->forward(features_->forward(x)).flatten(1);
    if (cifar_ && dropout_ > 0.0) x = torch::dropout(x, dropout_, is_training());
    return classifier_->forward(x);
  }

 private:
  bool cifar_;
  double dropout_;
  torch::nn::Sequential features_, classifier_;
  torch::nn::AdaptiveAvgPool2d avgpool_{nullptr};
};

}  // namespace

ModelSpec vgg_bn_spec(int depth) {
  const std::string name = "vgg" + std::to_string(depth) + "_bn";
  const std::vector<std::int64_t> config = vgg_config(depth);
  auto factory = [name, config](const ModelInputs& inputs, const Options& options) -> std::shared_ptr<Model> {
    check_inputs(name, inputs);
    const bool cifar = cifar_form(name, "head", options.string("head"), inputs);
    const double dropout = options.real("dropout");
    check_dropout(name, dropout);
    const auto& s = inputs.input_shape;
    if (s[1] < 32 || s[2] < 32)
      fail(name, "input must be at least 32x32 for five 2x2 poolings (got " + std::to_string(s[1]) + "x" +
                     std::to_string(s[2]) + ")");
    return std::make_shared<VggBn>(s[0], inputs.num_classes, config, cifar, dropout);
  };
  return {name,
          "VGG-" + std::to_string(depth) + " with batch norm (torchvision names)",
          {
              {"head", OptionType::string, std::string("auto"),
               "imagenet (7x7 pool, 4096-4096 classifier), cifar (global pool, one Linear) or auto (cifar when H, W <= "
               "64)"},
              {"dropout", OptionType::real, 0.5, "dropout in the classifier, in [0, 1)"},
          },
          factory,
          /*batch_factory=*/{},
          per_sample_targets()};
}

std::vector<OptionRule> vgg_rules() {
  return {OptionRule("head").one_of({"imagenet", "cifar", "auto"}), OptionRule("dropout").at_least(0).below(1)};
}

}  // namespace plugtrain::models
