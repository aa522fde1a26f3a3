// Blocks shared by the model zoo, named as torchvision names them so that a torchvision
// state_dict loads directly:
//  - BasicBlock and Bottleneck follow torchvision/models/resnet.py (v1.5: a Bottleneck puts its
//    stride on the 3x3 conv2); `downsample` is Sequential(0 = Conv2d 1x1 no bias, 1 = BatchNorm2d).
//  - SqueezeExcitation (se.fc1, se.fc2: 1x1 Conv2d with bias, as torchvision.ops.SqueezeExcitation)
//    is our addition; torchvision's ResNets have none.
//  - init_like_torchvision: Kaiming normal (fan_out, relu) convs with zero bias, BatchNorm 1 / 0.
//  - cifar_form: the stem/head choice "imagenet" | "cifar" | "auto" (auto: cifar when H, W <= 64).
// Activations and residual adds run in place on a layer's fresh output (a batch norm's, a
// convolution's, squeeze-and-excitation's product), as torchvision's ReLU(inplace=True) and
// `out += identity`: those layers' backward needs their inputs, not their output, so autograd
// allows it, and each saves a tensor's allocation and a pass over memory.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <string>

#include <torch/nn/init.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include "models.h"

namespace plugtrain::models {

// "imagenet" | "cifar" | "auto": true for the CIFAR form; auto picks it when H and W are <= 64.
inline bool cifar_form(const std::string& model, const std::string& option, const std::string& value,
                       const ModelInputs& inputs) {
  if (value == "cifar") return true;
  if (value == "imagenet") return false;
  if (value != "auto") fail(model, option + " must be one of imagenet, cifar, auto (got '" + value + "')");
  return inputs.input_shape[1] <= 64 && inputs.input_shape[2] <= 64;
}

// A k x k convolution with "same" padding ((k - 1) / 2), no bias unless asked.
inline torch::nn::Conv2dOptions conv_options(std::int64_t in, std::int64_t out, std::int64_t k, std::int64_t stride = 1,
                                             std::int64_t groups = 1, bool bias = false) {
  return torch::nn::Conv2dOptions(in, out, k).stride(stride).padding((k - 1) / 2).groups(groups).bias(bias);
}

// Channel count `c` times a width multiplier, at least 1.
inline std::int64_t scaled(std::int64_t c, double width) {
  return std::max<std::int64_t>(1, std::llround(static_cast<double>(c) * width));
}

// torchvision's initialisation: convs Kaiming normal (fan_out, relu) with zero bias, BatchNorm
// weight 1 and bias 0; Linear N(0, linear_std) with zero bias when linear_std > 0 (VGG, MobileNetV2),
// else LibTorch's default, which is PyTorch's (ResNet's fc).
inline void init_like_torchvision(torch::nn::Module& root, double linear_std = 0.0) {
  torch::NoGradGuard no_grad;
  for (const auto& m : root.modules(/*include_self=*/false)) {
    if (auto* conv = m->as<torch::nn::Conv2d>()) {
      torch::nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
      if (conv->bias.defined()) torch::nn::init::zeros_(conv->bias);
    } else if (auto* bn = m->as<torch::nn::BatchNorm2d>()) {
      torch::nn::init::ones_(bn->weight);
      torch::nn::init::zeros_(bn->bias);
    } else if (auto* fc = m->as<torch::nn::Linear>(); fc && linear_std > 0.0) {
      torch::nn::init::normal_(fc->weight, 0.0, linear_std);
      torch::nn::init::zeros_(fc->bias);
    }
  }
}

// Squeeze-and-excitation (Hu et al.): global average pool -> fc1 -> relu -> fc2 -> sigmoid, scaling
// each channel. fc1 and fc2 are 1x1 convs with bias; hidden width channels / reduction (at least 1).
class SqueezeExcitation : public torch::nn::Module {
 public:
  explicit SqueezeExcitation(std::int64_t channels, std::int64_t reduction = 16) {
    const std::int64_t hidden = std::max<std::int64_t>(1, channels / reduction);
    fc1_ = register_module("fc1", torch::nn::Conv2d(torch::nn::Conv2dOptions(channels, hidden, 1)));
    fc2_ = register_module("fc2", torch::nn::Conv2d(torch::nn::Conv2dOptions(hidden, channels, 1)));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor s = torch::adaptive_avg_pool2d(x, {1, 1});
    return x * torch::sigmoid(fc2_->forward(fc1_->forward(s).relu_()));
  }

 private:
  torch::nn::Conv2d fc1_{nullptr}, fc2_{nullptr};
};

// One unit of a network kept in a ModuleList (so the state_dict index is its position), run in order.
class Block : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(torch::Tensor x) = 0;
};

// A residual block of a ResNet; last_bn() is the BatchNorm that zero_init_residual zeroes.
class ResidualBlock : public Block {
 public:
  virtual torch::nn::BatchNorm2d last_bn() const = 0;

 protected:
  // torchvision's downsample when the shape changes: Sequential(0 = Conv2d 1x1 stride, 1 = BatchNorm2d).
  void add_downsample(std::int64_t in, std::int64_t out, std::int64_t stride) {
    if (stride == 1 && in == out) return;
    downsample_ = register_module(
        "downsample",
        torch::nn::Sequential(torch::nn::Conv2d(conv_options(in, out, 1, stride)), torch::nn::BatchNorm2d(out)));
  }
  void add_se(bool se, std::int64_t channels) {
    if (se) se_ = register_module("se", std::make_shared<SqueezeExcitation>(channels));
  }
  // out (the branch after its last bn, or se's product) -> += shortcut -> relu, in place.
  torch::Tensor finish(torch::Tensor out, const torch::Tensor& x) {
    if (se_) out = se_->forward(out);
    out += downsample_ ? downsample_->forward(x) : x;
    return out.relu_();
  }

 private:
  torch::nn::Sequential downsample_{nullptr};
  std::shared_ptr<SqueezeExcitation> se_;
};

// torchvision BasicBlock (expansion 1): conv1 3x3 stride -> bn1 -> relu -> conv2 3x3 -> bn2.
class BasicBlock final : public ResidualBlock {
 public:
  static constexpr std::int64_t expansion = 1;
  BasicBlock(std::int64_t in, std::int64_t planes, std::int64_t stride, bool se) {
    conv1_ = register_module("conv1", torch::nn::Conv2d(conv_options(in, planes, 3, stride)));
    bn1_ = register_module("bn1", torch::nn::BatchNorm2d(planes));
    conv2_ = register_module("conv2", torch::nn::Conv2d(conv_options(planes, planes, 3)));
    bn2_ = register_module("bn2", torch::nn::BatchNorm2d(planes));
    add_se(se, planes);
    add_downsample(in, planes, stride);
  }
  torch::Tensor forward(torch::Tensor x) override {
    torch::Tensor out = bn1_->forward(conv1_->forward(x)).relu_();
    return finish(bn2_->forward(conv2_->forward(out)), x);
  }
  torch::nn::BatchNorm2d last_bn() const override { return bn2_; }

 private:
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
  torch::nn::BatchNorm2d bn1_{nullptr}, bn2_{nullptr};
};

// torchvision Bottleneck (expansion 4): conv1 1x1 -> conv2 3x3 stride -> conv3 1x1 to planes * 4,
// each followed by its bn. `width` is the inner width: planes * width_per_group / 64.
class Bottleneck final : public ResidualBlock {
 public:
  static constexpr std::int64_t expansion = 4;
  Bottleneck(std::int64_t in, std::int64_t planes, std::int64_t stride, std::int64_t width, bool se) {
    conv1_ = register_module("conv1", torch::nn::Conv2d(conv_options(in, width, 1)));
    bn1_ = register_module("bn1", torch::nn::BatchNorm2d(width));
    conv2_ = register_module("conv2", torch::nn::Conv2d(conv_options(width, width, 3, stride)));
    bn2_ = register_module("bn2", torch::nn::BatchNorm2d(width));
    conv3_ = register_module("conv3", torch::nn::Conv2d(conv_options(width, planes * expansion, 1)));
    bn3_ = register_module("bn3", torch::nn::BatchNorm2d(planes * expansion));
    add_se(se, planes * expansion);
    add_downsample(in, planes * expansion, stride);
  }
  torch::Tensor forward(torch::Tensor x) override {
    torch::Tensor out = bn1_->forward(conv1_->forward(x)).relu_();
    out = bn2_->forward(conv2_->forward(out)).relu_();
    return finish(bn3_->forward(conv3_->forward(out)), x);
  }
  torch::nn::BatchNorm2d last_bn() const override { return bn3_; }

 private:
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr}, conv3_{nullptr};
  torch::nn::BatchNorm2d bn1_{nullptr}, bn2_{nullptr}, bn3_{nullptr};
};

// resnet.cpp: a torchvision ResNet family member, with the options of resnet_rules().
struct ResNetLayout {
  bool bottleneck = false;
  std::array<std::int64_t, 4> blocks{};
  std::int64_t width_per_group = 64;  // Bottleneck inner width = planes * width_per_group / 64
};
ModelSpec resnet_family_spec(const std::string& name, const std::string& description, ResNetLayout layout);

}  // namespace plugtrain::models
