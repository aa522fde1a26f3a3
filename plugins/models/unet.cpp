// unet: a small U-Net (Ronneberger et al., 2015) for segmentation: per-pixel class scores
// (N, classes, H, W) at the input's size. Each level is two 3x3 convolutions with batch norm
// and relu; the encoder halves the size by max-pooling, the decoder doubles it with a
// transposed convolution and joins the encoder's features of that size (the skip connection).
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>

#include "models.h"

namespace plugtrain::models {

namespace {

namespace nn = torch::nn;

// conv 3x3 -> bn -> relu, twice (relu in place on batch norm's fresh output).
nn::Sequential double_conv(std::int64_t in, std::int64_t out) {
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(in, out, 3).padding(1).bias(false)), nn::BatchNorm2d(out),
                        nn::ReLU(nn::ReLUOptions(true)), nn::Conv2d(nn::Conv2dOptions(out, out, 3).padding(1).bias(false)),
                        nn::BatchNorm2d(out), nn::ReLU(nn::ReLUOptions(true)));
}

class UNet final : public TensorModel {
 public:
  UNet(std::int64_t channels, std::int64_t classes, std::int64_t width, std::int64_t depth) {
    std::int64_t in = channels;
    for (std::int64_t level = 0; level <= depth; ++level) {
      const std::int64_t out = width << level;
      down_.push_back(register_module("down" + std::to_string(level), double_conv(in, out)));
      in = out;
    }
    for (std::int64_t level = depth - 1; level >= 0; --level) {
      const std::int64_t out = width << level;
      const std::string name = std::to_string(level);
      upsample_.push_back(register_module("upsample" + name,
                                          nn::ConvTranspose2d(nn::ConvTranspose2dOptions(in, out, 2).stride(2))));
      up_.push_back(register_module("up" + name, double_conv(2 * out, out)));
      in = out;
    }
    head_ = register_module("head", nn::Conv2d(nn::Conv2dOptions(width, classes, 1)));
  }

  torch::Tensor forward(torch::Tensor x) override {
    std::vector<torch::Tensor> skips;
    for (std::size_t level = 0; level < down_.size(); ++level) {
      if (level > 0) x = torch::max_pool2d(x, {2, 2});
      x = down_[level]->forward(x);
      skips.push_back(x);
    }
    for (std::size_t i = 0; i < up_.size(); ++i) {
      const torch::Tensor& skip = skips[skips.size() - 2 - i];
      x = upsample_[i]->forward(x);
      x = up_[i]->forward(torch::cat({skip, x}, 1));
    }
    return head_->forward(x);
  }

 private:
  std::vector<nn::Sequential> down_, up_;
  std::vector<nn::ConvTranspose2d> upsample_;
  nn::Conv2d head_{nullptr};
};

std::shared_ptr<Model> make_unet(const ModelInputs& inputs, const Options& options) {
  check_inputs("unet", inputs);
  const std::int64_t width = options.integer("width"), depth = options.integer("depth");
  const auto& s = inputs.input_shape;
  const std::int64_t multiple = std::int64_t{1} << depth;
  if (s[1] % multiple != 0 || s[2] % multiple != 0)
    fail("unet", "input " + std::to_string(s[1]) + "x" + std::to_string(s[2]) + " must be a multiple of " +
                     std::to_string(multiple) + " on each side for depth " + std::to_string(depth) +
                     " (pad the images or lower depth)");
  return std::make_shared<UNet>(s[0], inputs.num_classes, width, depth);
}

}  // namespace

ModelSpec unet_spec() {
  return {"unet",
          "Small U-Net for segmentation: per-pixel class scores (N, classes, H, W) at the input's size",
          {
              {"width", OptionType::integer, std::int64_t{16}, "channels of the first level (doubled at each level down)"},
              {"depth", OptionType::integer, std::int64_t{2}, "levels below the first (each halves the size)"},
          },
          make_unet,
          /*batch_factory=*/{},
          {DatasetTargets::pixel_class}};
}

std::vector<OptionRule> unet_rules() {
  return {OptionRule("width").at_least(1).at_most(512), OptionRule("depth").at_least(1).at_most(5)};
}

}  // namespace plugtrain::models
