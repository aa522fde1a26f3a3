// wide_resnet: the CIFAR Wide ResNet WRN-depth-k (Zagoruyko & Komodakis, 2016), with the
// parameter names of the common PyTorch implementation (xternalz/WideResNet-pytorch), so its
// state_dict loads as is:
//   conv1                        3x3, input channels -> 16, no bias
//   block1, block2, block3       groups of n = (depth - 4) / 6 pre-activation blocks, each
//     .layer.<i>.bn1, .conv1       bn1 -> relu -> conv1 3x3 (stride 1, 2, 2 on the first block)
//     .layer.<i>.bn2, .conv2       bn2 -> relu -> dropout -> conv2 3x3
//     .layer.<i>.convShortcut      1x1 stride conv, no bias, where the channel count changes
//   bn1, fc                      final bn -> relu -> global average pool -> fc
// Channels 16, 16k, 32k, 64k. As in that implementation, a block whose channels change feeds
// relu(bn1(x)) to both conv1 and convShortcut; otherwise the shortcut is x itself. WRN-28-10 on
// CIFAR-10 has 36,479,194 parameters. Convs start Kaiming normal (fan_out), fc's bias at 0.
#include <torch/nn/modules/container/modulelist.h>

#include "blocks.h"

namespace plugtrain::models {

namespace {

class WideBasicBlock final : public Block {
 public:
  WideBasicBlock(std::int64_t in, std::int64_t out, std::int64_t stride, double dropout) : dropout_(dropout) {
    bn1_ = register_module("bn1", torch::nn::BatchNorm2d(in));
    conv1_ = register_module("conv1", torch::nn::Conv2d(conv_options(in, out, 3, stride)));
    bn2_ = register_module("bn2", torch::nn::BatchNorm2d(out));
    conv2_ = register_module("conv2", torch::nn::Conv2d(conv_options(out, out, 3)));
    if (in != out) shortcut_ = register_module("convShortcut", torch::nn::Conv2d(conv_options(in, out, 1, stride)));
  }
  torch::Tensor forward(torch::Tensor x) override {
    // In place on fresh outputs (blocks.h): batch norm's and convolution's backward need only
    // their inputs.
    torch::Tensor pre = bn1_->forward(x).relu_();
    torch::Tensor out = bn2_->forward(conv1_->forward(pre)).relu_();
    if (dropout_ > 0.0) out = torch::dropout(out, dropout_, is_training());
    out = conv2_->forward(out);
    out += shortcut_ ? shortcut_->forward(pre) : x;
    return out;
  }

 private:
  double dropout_;
  torch::nn::BatchNorm2d bn1_{nullptr}, bn2_{nullptr};
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr}, shortcut_{nullptr};
};

// A group of blocks, held as `layer` (block<g>.layer.<i>) like the reference's NetworkBlock.
class NetworkBlock final : public torch::nn::Module {
 public:
  NetworkBlock(std::int64_t n, std::int64_t in, std::int64_t out, std::int64_t stride, double dropout) {
    torch::nn::ModuleList layer;
    for (std::int64_t i = 0; i < n; ++i) {
      auto block = std::make_shared<WideBasicBlock>(i == 0 ? in : out, out, i == 0 ? stride : 1, dropout);
      layer->push_back(block);
      blocks_.push_back(block);
    }
    register_module("layer", layer);
  }
  torch::Tensor forward(torch::Tensor x) {
    for (const auto& b : blocks_) x = b->forward(x);
    return x;
  }

 private:
  std::vector<std::shared_ptr<WideBasicBlock>> blocks_;
};

class WideResNet final : public TensorModel {
 public:
  WideResNet(std::int64_t in_channels, std::int64_t classes, std::int64_t depth, std::int64_t k, double dropout) {
    const std::int64_t n = (depth - 4) / 6;
    const std::int64_t c[] = {16, 16 * k, 32 * k, 64 * k};
    conv1_ = register_module("conv1", torch::nn::Conv2d(conv_options(in_channels, c[0], 3)));
    for (int g = 0; g < 3; ++g)
      groups_.push_back(register_module("block" + std::to_string(g + 1),
                                        std::make_shared<NetworkBlock>(n, c[g], c[g + 1], g == 0 ? 1 : 2, dropout)));
    bn1_ = register_module("bn1", torch::nn::BatchNorm2d(c[3]));
    fc_ = register_module("fc", torch::nn::Linear(c[3], classes));
    init_like_torchvision(*this);
    torch::NoGradGuard no_grad;
    fc_->bias.zero_();
  }

  torch::Tensor forward(torch::Tensor x) override {
    x = conv1_->forward(x);
    for (const auto& g : groups_) x = g->forward(x);
    x = bn1_->forward(x).relu_();
    return fc_->forward(torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1));
  }

 private:
  torch::nn::Conv2d conv1_{nullptr};
  std::vector<std::shared_ptr<NetworkBlock>> groups_;
  torch::nn::BatchNorm2d bn1_{nullptr};
  torch::nn::Linear fc_{nullptr};
};

std::shared_ptr<Model> make_wide_resnet(const ModelInputs& inputs, const Options& options) {
  check_inputs("wide_resnet", inputs);
  const std::int64_t depth = options.integer("depth");
  if (depth < 10 || (depth - 4) % 6 != 0)
    fail("wide_resnet", "depth must be 6n + 4 with n >= 1, e.g. 16, 22, 28, 40 (got " + std::to_string(depth) + ")");
  const std::int64_t k = options.integer("widen_factor");
  if (k < 1) fail("wide_resnet", "widen_factor must be >= 1 (got " + std::to_string(k) + ")");
  const double dropout = options.real("dropout");
  check_dropout("wide_resnet", dropout);
  return std::make_shared<WideResNet>(inputs.input_shape[0], inputs.num_classes, depth, k, dropout);
}

}  // namespace

ModelSpec wide_resnet_spec() {
  return {"wide_resnet",
          "CIFAR Wide ResNet WRN-depth-k (Zagoruyko & Komodakis; names of the common PyTorch implementation)",
          {
              {"depth", OptionType::integer, std::int64_t{28}, "total depth, 6n + 4 (n blocks per group)"},
              {"widen_factor", OptionType::integer, std::int64_t{10}, "k: groups have 16k, 32k, 64k channels"},
              {"dropout", OptionType::real, 0.0, "dropout between the two convs of each block, in [0, 1)"},
          },
          make_wide_resnet,
          /*batch_factory=*/{},
          per_sample_targets()};
}

std::vector<OptionRule> wide_resnet_rules() {
  return {OptionRule("depth").at_least(10), OptionRule("widen_factor").at_least(1),
          OptionRule("dropout").at_least(0).below(1)};
}

}  // namespace plugtrain::models
