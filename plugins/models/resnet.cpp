// resnet18, resnet34 (BasicBlock), resnet50, resnet101 (Bottleneck): torchvision's ResNet
// (torchvision/models/resnet.py, v1.5). Parameter names and shapes are torchvision's: conv1, bn1,
// layer1..layer4 (blocks 0, 1, ...; in each conv1, bn1, conv2, bn2[, conv3, bn3][, downsample.0,
// downsample.1]), fc. With the defaults and an input over 64 px, 1000 classes, a torchvision
// state_dict loads as is.
// Options beyond torchvision:
//  - stem: imagenet (conv1 7x7 stride 2 pad 3, bn1, relu, maxpool 3/2/1), cifar (conv1 3x3
//    stride 1 pad 1, no maxpool), auto (cifar when H and W <= 64).
//  - width: multiplies the stem's and every stage's channel count (1 = torchvision).
//  - se: a squeeze-and-excitation module `se` (se.fc1, se.fc2) after each block's last bn.
//  - zero_init_residual: each block's last BN weight starts at 0 (torchvision's flag).
//  - dropout: before fc.
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/dropout.h>

#include "blocks.h"
#include "plugtrain/units.h"

namespace plugtrain::models {

namespace {

struct ResNetConfig {
  bool cifar = false;
  double width = 1.0;
  bool se = false;
  bool zero_init_residual = false;
  double dropout = 0.0;
};

class ResNet final : public TensorModel {
 public:
  ResNet(std::int64_t in_channels, std::int64_t classes, const ResNetLayout& layout, const ResNetConfig& config)
      : cifar_(config.cifar) {
    std::int64_t inplanes = scaled(64, config.width);
    conv1_ = register_module("conv1", torch::nn::Conv2d(cifar_ ? conv_options(in_channels, inplanes, 3)
                                                               : conv_options(in_channels, inplanes, 7, 2)));
    bn1_ = register_module("bn1", torch::nn::BatchNorm2d(inplanes));
    for (std::int64_t stage = 0; stage < 4; ++stage) {
      const std::int64_t planes = scaled(64 << stage, config.width);
      torch::nn::ModuleList layer;
      for (std::int64_t i = 0; i < layout.blocks[stage]; ++i) {
        const std::int64_t stride = (stage > 0 && i == 0) ? 2 : 1;
        std::shared_ptr<ResidualBlock> block;
        if (layout.bottleneck) {
          block =
              std::make_shared<Bottleneck>(inplanes, planes, stride, planes * layout.width_per_group / 64, config.se);
          inplanes = planes * Bottleneck::expansion;
        } else {
          block = std::make_shared<BasicBlock>(inplanes, planes, stride, config.se);
          inplanes = planes * BasicBlock::expansion;
        }
        layer->push_back(block);
        blocks_.push_back(block);
        units_.add("layer" + std::to_string(stage + 1) + "." + std::to_string(i));
      }
      register_module("layer" + std::to_string(stage + 1), layer);
    }
    if (config.dropout > 0.0) dropout_ = register_module("dropout", torch::nn::Dropout(config.dropout));
    fc_ = register_module("fc", torch::nn::Linear(inplanes, classes));
    init_like_torchvision(*this);
    if (config.zero_init_residual) {
      torch::NoGradGuard no_grad;
      for (const auto& b : blocks_) b->last_bn()->weight.zero_();
    }
  }

  torch::Tensor forward(torch::Tensor x) override {
    x = bn1_->forward(conv1_->forward(x)).relu_();
    if (!cifar_) x = torch::max_pool2d(x, {3, 3}, {2, 2}, {1, 1});
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
      ResidualBlock* block = blocks_[i].get();
      x = units_.run(i, x, [block](const torch::Tensor& in) { return block->forward(in); });
    }
    x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
    if (dropout_) x = dropout_->forward(x);
    return fc_->forward(x);
  }

  // The residual blocks are the units (plugtrain/units.h): sharded and checkpointed one by one.
  void* extension(const char* name, std::uint32_t version) override { return units_.extension(name, version); }

 private:
  bool cifar_;
  torch::nn::Conv2d conv1_{nullptr};
  torch::nn::BatchNorm2d bn1_{nullptr};
  std::vector<std::shared_ptr<ResidualBlock>> blocks_;
  Units units_;
  torch::nn::Dropout dropout_{nullptr};
  torch::nn::Linear fc_{nullptr};
};

}  // namespace

ModelSpec resnet_family_spec(const std::string& name, const std::string& description, ResNetLayout layout) {
  auto factory = [name, layout](const ModelInputs& inputs, const Options& options) -> std::shared_ptr<Model> {
    check_inputs(name, inputs);
    ResNetConfig config;
    config.cifar = cifar_form(name, "stem", options.string("stem"), inputs);
    config.width = options.real("width");
    if (!(config.width > 0.0)) fail(name, "width must be > 0 (got " + std::to_string(config.width) + ")");
    config.se = options.boolean("se");
    config.zero_init_residual = options.boolean("zero_init_residual");
    config.dropout = options.real("dropout");
    check_dropout(name, config.dropout);
    return std::make_shared<ResNet>(inputs.input_shape[0], inputs.num_classes, layout, config);
  };
  return {name,
          description,
          {
              {"stem", OptionType::string, std::string("auto"),
               "imagenet (7x7/2 conv + maxpool), cifar (3x3/1 conv, no maxpool) or auto (cifar when H, W <= 64)"},
              {"width", OptionType::real, 1.0, "multiplier on every stage's channel count (1: torchvision's)"},
              {"se", OptionType::boolean, false, "squeeze-and-excitation (reduction 16) in every block"},
              {"zero_init_residual", OptionType::boolean, false, "start each block's last BatchNorm weight at 0"},
              {"dropout", OptionType::real, 0.0, "dropout before fc, in [0, 1)"},
          },
          factory,
          /*batch_factory=*/{},
          per_sample_targets()};
}

std::vector<OptionRule> resnet_rules() {
  return {OptionRule("stem").one_of({"imagenet", "cifar", "auto"}), OptionRule("width").above(0),
          OptionRule("dropout").at_least(0).below(1)};
}

ModelSpec resnet_spec(int depth) {
  const std::string name = "resnet" + std::to_string(depth);
  switch (depth) {
    case 18:
      return resnet_family_spec(name, "ResNet-18 (torchvision names; BasicBlock [2, 2, 2, 2])", {false, {2, 2, 2, 2}});
    case 34:
      return resnet_family_spec(name, "ResNet-34 (torchvision names; BasicBlock [3, 4, 6, 3])", {false, {3, 4, 6, 3}});
    case 50:
      return resnet_family_spec(name, "ResNet-50 (torchvision names; Bottleneck [3, 4, 6, 3])", {true, {3, 4, 6, 3}});
    case 101:
      return resnet_family_spec(name, "ResNet-101 (torchvision names; Bottleneck [3, 4, 23, 3])",
                                {true, {3, 4, 23, 3}});
    default: break;
  }
  throw std::logic_error("no resnet of depth " + std::to_string(depth));
}

}  // namespace plugtrain::models
