// crnn: a convolutional recurrent network for sequence recognition (Shi et al., 2015): 3x3
// convolution blocks with batch norm, relu and 2x2 max-pooling read the image; each column of
// the feature map (its channels at every remaining row) is one time step; a bidirectional LSTM reads
// the steps and a linear layer scores each step's classes: (N, T = W / 2^blocks, classes), for
// [task] name = "sequence" (CTC). num_classes counts CTC's blank.
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/rnn.h>

#include "models.h"

namespace plugtrain::models {

namespace {

namespace nn = torch::nn;

class Crnn final : public TensorModel {
 public:
  // `rows`: the feature map's height after the poolings.
  Crnn(std::int64_t in, std::int64_t rows, std::int64_t classes, const std::vector<std::int64_t>& channels,
       std::int64_t hidden) {
    for (std::size_t i = 0; i < channels.size(); ++i) {
      const std::string index = std::to_string(i);
      convs_.push_back(register_module(
          "conv" + index, nn::Conv2d(nn::Conv2dOptions(in, channels[i], 3).padding(1).bias(false))));
      norms_.push_back(register_module("bn" + index, nn::BatchNorm2d(channels[i])));
      in = channels[i];
    }
    lstm_ = register_module("lstm", nn::LSTM(nn::LSTMOptions(in * rows, hidden).batch_first(true).bidirectional(true)));
    fc_ = register_module("fc", nn::Linear(2 * hidden, classes));
  }

  torch::Tensor forward(torch::Tensor x) override {
    for (std::size_t i = 0; i < convs_.size(); ++i)
      x = torch::max_pool2d(norms_[i]->forward(convs_[i]->forward(x)).relu_(), {2, 2});
    x = x.permute({0, 3, 1, 2}).flatten(2).contiguous();  // (N, C, H, W) -> (N, W, C x H): one step per column
    return fc_->forward(std::get<0>(lstm_->forward(x)));
  }

 private:
  std::vector<nn::Conv2d> convs_;
  std::vector<nn::BatchNorm2d> norms_;
  nn::LSTM lstm_{nullptr};
  nn::Linear fc_{nullptr};
};

std::shared_ptr<Model> make_crnn(const ModelInputs& inputs, const Options& options) {
  check_inputs("crnn", inputs);
  const auto& channels = options.integers("channels");
  const auto& s = inputs.input_shape;
  const std::int64_t shrink = std::int64_t{1} << channels.size();
  if (s[1] < shrink || s[2] < shrink)
    fail("crnn", "input " + std::to_string(s[1]) + "x" + std::to_string(s[2]) + " is smaller than the " +
                     std::to_string(shrink) + "x" + std::to_string(shrink) + " its " + std::to_string(channels.size()) +
                     " poolings need");
  return std::make_shared<Crnn>(s[0], s[1] / shrink, inputs.num_classes, channels, options.integer("hidden"));
}

}  // namespace

ModelSpec crnn_spec() {
  return {"crnn",
          "Convolutions, then a bidirectional LSTM over the image's columns: per-step class scores (N, T, classes) "
          "for CTC",
          {
              {"channels", OptionType::integer_list, std::vector<std::int64_t>{32, 64},
               "output channels of each conv block (each halves height and width: T = W / 2^blocks)"},
              {"hidden", OptionType::integer, std::int64_t{64}, "LSTM width per direction"},
          },
          make_crnn,
          /*batch_factory=*/{},
          {DatasetTargets::sequence}};
}

std::vector<OptionRule> crnn_rules() {
  return {OptionRule("channels").at_least(1).length(1, 6), OptionRule("hidden").at_least(1).at_most(4096)};
}

}  // namespace plugtrain::models
