// mobilenet_v2: torchvision's MobileNetV2 (torchvision/models/mobilenetv2.py), same names and
// shapes:
//   features.0        Conv2dNormActivation: .0 Conv2d 3x3 stride 2 (no bias), .1 BatchNorm2d, ReLU6
//   features.1..17    InvertedResidual, each `conv` indexed as torchvision: with expansion
//                     (t != 1) conv.0 (1x1 expand: .0 conv, .1 bn), conv.1 (3x3 depthwise: .0, .1),
//                     conv.2 (1x1 project conv), conv.3 (bn); with t == 1 (features.1) conv.0
//                     (depthwise), conv.1 (project conv), conv.2 (bn)
//   features.18       Conv2dNormActivation 1x1 to last_channel (1280)
//   classifier        0 Dropout, 1 Linear(last_channel, classes)
// width_mult scales channels with torchvision's _make_divisible(c * width_mult, 8), and
// last_channel with max(1, width_mult). Stem cifar (auto: H and W <= 64) is the usual CIFAR
// MobileNetV2: features.0 with stride 1 and the 24-channel stage (features.2) with stride 1, so a
// 32x32 input ends at 4x4; the parameters are the same as the imagenet form's.
// Init as torchvision: convs Kaiming normal (fan_out), BatchNorm 1 / 0, Linear N(0, 0.01), bias 0.
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/dropout.h>

#include "blocks.h"

namespace plugtrain::models {

namespace {

// torchvision's _make_divisible: round to the nearest multiple of `divisor`, not below it and
// not more than 10% below v.
std::int64_t make_divisible(double v, std::int64_t divisor = 8) {
  std::int64_t rounded =
      std::max<std::int64_t>(divisor, static_cast<std::int64_t>(v + divisor / 2.0) / divisor * divisor);
  if (static_cast<double>(rounded) < 0.9 * v) rounded += divisor;
  return rounded;
}

// Conv2dNormActivation: "0" conv (no bias), "1" BatchNorm2d, then ReLU6 (no parameters).
class ConvBnReLU6 final : public Block {
 public:
  ConvBnReLU6(std::int64_t in, std::int64_t out, std::int64_t k, std::int64_t stride = 1, std::int64_t groups = 1) {
    conv_ = register_module("0", torch::nn::Conv2d(conv_options(in, out, k, stride, groups)));
    bn_ = register_module("1", torch::nn::BatchNorm2d(out));
  }
  // ReLU6 in place, as torchvision's (blocks.h).
  torch::Tensor forward(torch::Tensor x) override {
    torch::Tensor out = bn_->forward(conv_->forward(x));
    return torch::hardtanh_(out, 0.0, 6.0);
  }

 private:
  torch::nn::Conv2d conv_{nullptr};
  torch::nn::BatchNorm2d bn_{nullptr};
};

class InvertedResidual final : public Block {
 public:
  InvertedResidual(std::int64_t in, std::int64_t out, std::int64_t stride, std::int64_t expand_ratio)
      : residual_(stride == 1 && in == out) {
    const std::int64_t hidden = in * expand_ratio;
    if (expand_ratio != 1) units_.push_back(std::make_shared<ConvBnReLU6>(in, hidden, 1));  // expand
    units_.push_back(std::make_shared<ConvBnReLU6>(hidden, hidden, 3, stride, hidden));     // depthwise
    project_ = torch::nn::Conv2d(conv_options(hidden, out, 1));
    bn_ = torch::nn::BatchNorm2d(out);
    torch::nn::ModuleList conv;
    for (const auto& u : units_) conv->push_back(u);
    conv->push_back(project_);
    conv->push_back(bn_);
    register_module("conv", conv);
  }
  torch::Tensor forward(torch::Tensor x) override {
    torch::Tensor out = x;
    for (const auto& u : units_) out = u->forward(out);
    out = bn_->forward(project_->forward(out));
    return residual_ ? x + out : out;
  }

 private:
  bool residual_;
  std::vector<std::shared_ptr<ConvBnReLU6>> units_;
  torch::nn::Conv2d project_{nullptr};
  torch::nn::BatchNorm2d bn_{nullptr};
};

class MobileNetV2 final : public TensorModel {
 public:
  MobileNetV2(std::int64_t in_channels, std::int64_t classes, double width_mult, double dropout, bool cifar) {
    struct Stage {
      std::int64_t t, c, n, s;
    };
    // t expansion, c channels, n blocks, s stride of the first block (torchvision's table).
    const Stage stages[] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                            {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
    std::int64_t channels = make_divisible(32 * width_mult);
    const std::int64_t last = make_divisible(1280 * std::max(1.0, width_mult));
    torch::nn::ModuleList features;
    auto add = [&](std::shared_ptr<Block> b) {
      features->push_back(b);
      blocks_.push_back(std::move(b));
    };
    add(std::make_shared<ConvBnReLU6>(in_channels, channels, 3, cifar ? 1 : 2));
    for (std::size_t i = 0; i < std::size(stages); ++i) {
      const Stage& st = stages[i];
      const std::int64_t out = make_divisible(static_cast<double>(st.c) * width_mult);
      const std::int64_t stride = (cifar && st.c == 24) ? 1 : st.s;
      for (std::int64_t b = 0; b < st.n; ++b) {
        add(std::make_shared<InvertedResidual>(channels, out, b == 0 ? stride : 1, st.t));
        channels = out;
      }
    }
    add(std::make_shared<ConvBnReLU6>(channels, last, 1));
    register_module("features", features);
    classifier_->push_back(torch::nn::Dropout(dropout));
    classifier_->push_back(torch::nn::Linear(last, classes));
    register_module("classifier", classifier_);
    init_like_torchvision(*this, /*linear_std=*/0.01);
  }

  torch::Tensor forward(torch::Tensor x) override {
    for (const auto& b : blocks_) x = b->forward(x);
    return classifier_->forward(torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1));
  }

 private:
  std::vector<std::shared_ptr<Block>> blocks_;
  torch::nn::Sequential classifier_;
};

std::shared_ptr<Model> make_mobilenet_v2(const ModelInputs& inputs, const Options& options) {
  check_inputs("mobilenet_v2", inputs);
  const double width_mult = options.real("width_mult");
  if (!(width_mult > 0.0)) fail("mobilenet_v2", "width_mult must be > 0 (got " + std::to_string(width_mult) + ")");
  const double dropout = options.real("dropout");
  check_dropout("mobilenet_v2", dropout);
  const bool cifar = cifar_form("mobilenet_v2", "stem", options.string("stem"), inputs);
  return std::make_shared<MobileNetV2>(inputs.input_shape[0], inputs.num_classes, width_mult, dropout, cifar);
}

}  // namespace

ModelSpec mobilenet_v2_spec() {
  return {"mobilenet_v2",
          "MobileNetV2 (torchvision names): inverted residual blocks, 1280-channel head",
          {
              {"width_mult", OptionType::real, 1.0, "channel multiplier, rounded to multiples of 8 as torchvision"},
              {"dropout", OptionType::real, 0.2, "dropout before the classifier's Linear, in [0, 1)"},
              {"stem", OptionType::string, std::string("auto"),
               "imagenet, cifar (first conv and the 24-channel stage at stride 1) or auto (cifar when H, W <= 64)"},
          },
          make_mobilenet_v2,
          /*batch_factory=*/{},
          per_sample_targets()};
}

std::vector<OptionRule> mobilenet_v2_rules() {
  return {OptionRule("width_mult").above(0), OptionRule("dropout").at_least(0).below(1),
          OptionRule("stem").one_of({"imagenet", "cifar", "auto"})};
}

}  // namespace plugtrain::models
