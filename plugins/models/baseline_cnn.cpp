// baseline_cnn: a plain CNN of conv-bn-relu stages, each ending in a 2x2 max pool, then global
// average pool -> dropout -> fc. Parameter names:
//   stages.<s>.conv<j>, stages.<s>.bn<j>   j = 1..convs_per_stage: 3x3 conv (no bias) -> bn -> relu
//   stages.<s>.se.fc1, stages.<s>.se.fc2   with se: squeeze-and-excitation (reduction 16) after
//                                          the stage's last relu, before its pool
//   fc                                     Linear(channels.back(), classes)
// One option set per network of the TinyImageNet guide:
//   baseline             the defaults: channels [64, 128, 256], convs_per_stage 1
//   deeper and wider     e.g. channels [64, 128, 256, 512], convs_per_stage 2
//   channel attention    se = true (on either of the above)
// Inputs must be at least 2^stages pixels on each side. Init as torchvision (blocks.h).
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/dropout.h>

#include "blocks.h"

namespace plugtrain::models {

namespace {

class ConvStage final : public Block {
 public:
  ConvStage(std::int64_t in, std::int64_t out, std::int64_t convs, bool se) {
    for (std::int64_t j = 1; j <= convs; ++j) {
      convs_.push_back(
          register_module("conv" + std::to_string(j), torch::nn::Conv2d(conv_options(j == 1 ? in : out, out, 3))));
      bns_.push_back(register_module("bn" + std::to_string(j), torch::nn::BatchNorm2d(out)));
    }
    if (se) se_ = register_module("se", std::make_shared<SqueezeExcitation>(out));
  }
  torch::Tensor forward(torch::Tensor x) override {
    for (std::size_t j = 0; j < convs_.size(); ++j) x = bns_[j]->forward(convs_[j]->forward(x)).relu_();
    if (se_) x = se_->forward(x);
    return torch::max_pool2d(x, {2, 2});
  }

 private:
  std::vector<torch::nn::Conv2d> convs_;
  std::vector<torch::nn::BatchNorm2d> bns_;
  std::shared_ptr<SqueezeExcitation> se_;
};

class BaselineCnn final : public TensorModel {
 public:
  BaselineCnn(std::int64_t in_channels, std::int64_t classes, const std::vector<std::int64_t>& channels,
              std::int64_t convs, bool se, double dropout) {
    torch::nn::ModuleList stages;
    std::int64_t c = in_channels;
    for (std::int64_t out : channels) {
      auto stage = std::make_shared<ConvStage>(c, out, convs, se);
      stages->push_back(stage);
      stages_.push_back(stage);
      c = out;
    }
    register_module("stages", stages);
    if (dropout > 0.0) dropout_ = register_module("dropout", torch::nn::Dropout(dropout));
    fc_ = register_module("fc", torch::nn::Linear(c, classes));
    init_like_torchvision(*this);
  }

  torch::Tensor forward(torch::Tensor x) override {
    for (const auto& s : stages_) x = s->forward(x);
    x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
    if (dropout_) x = dropout_->forward(x);
    return fc_->forward(x);
  }

 private:
  std::vector<std::shared_ptr<ConvStage>> stages_;
  torch::nn::Dropout dropout_{nullptr};
  torch::nn::Linear fc_{nullptr};
};

std::shared_ptr<Model> make_baseline_cnn(const ModelInputs& inputs, const Options& options) {
  check_inputs("baseline_cnn", inputs);
  const auto& channels = options.integers("channels");
  if (channels.empty()) fail("baseline_cnn", "channels must have at least 1 entry");
  for (std::int64_t c : channels)
    if (c <= 0) fail("baseline_cnn", "channels must be > 0 (got " + std::to_string(c) + ")");
  const std::int64_t convs = options.integer("convs_per_stage");
  if (convs < 1) fail("baseline_cnn", "convs_per_stage must be >= 1 (got " + std::to_string(convs) + ")");
  const double dropout = options.real("dropout");
  check_dropout("baseline_cnn", dropout);
  const auto& s = inputs.input_shape;
  const std::int64_t min_side = channels.size() < 31 ? std::int64_t{1} << channels.size() : INT64_MAX;
  if (s[1] < min_side || s[2] < min_side)
    fail("baseline_cnn", "input must be at least " + std::to_string(min_side) + "x" + std::to_string(min_side) +
                             " for " + std::to_string(channels.size()) + " 2x2 poolings (got " + std::to_string(s[1]) +
                             "x" + std::to_string(s[2]) + ")");
  return std::make_shared<BaselineCnn>(s[0], inputs.num_classes, channels, convs, options.boolean("se"), dropout);
}

}  // namespace

ModelSpec baseline_cnn_spec() {
  return {"baseline_cnn",
          "Plain CNN: conv-bn-relu stages with 2x2 max pools, optional SE, global pool and fc",
          {
              {"channels", OptionType::integer_list, std::vector<std::int64_t>{64, 128, 256},
               "output channels of each stage, in order (one 2x2 max pool per stage)"},
              {"convs_per_stage", OptionType::integer, std::int64_t{1}, "3x3 conv-bn-relu units per stage"},
              {"se", OptionType::boolean, false, "squeeze-and-excitation (reduction 16) at the end of each stage"},
              {"dropout", OptionType::real, 0.0, "dropout before fc, in [0, 1)"},
          },
          make_baseline_cnn,
          /*batch_factory=*/{},
          per_sample_targets()};
}

std::vector<OptionRule> baseline_cnn_rules() {
  return {OptionRule("channels").at_least(1).length(1, 16), OptionRule("convs_per_stage").at_least(1),
          OptionRule("dropout").at_least(0).below(1)};
}

}  // namespace plugtrain::models
