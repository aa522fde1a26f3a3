// The input is a clip of `frames` frames stacked top to bottom, (N, C, frames x H, W), as the
// ce-csl data set gives it; the output (N, frames / 2, classes) is per-step scores for CTC
// ([task] name = "sequence"; num_classes counts the blank). With the batch's input_lengths (each
// clip's real frames, the rest padding) the LSTM reads only each clip's real steps (a packed
// sequence, so the backward direction starts at its last real step) and the outputs say how many
// steps are real: output_lengths = input_lengths / 2.
#include "tfnet_lite.h"

#include <stdexcept>
#include <string>

#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/rnn.h>
#include <torch/nn/utils/rnn.h>

namespace sign_language {

namespace {

namespace nn = torch::nn;

class TfnetLite final : public plugtrain::TensorModel {
 public:
  TfnetLite(std::int64_t in, std::int64_t frames, const std::vector<std::int64_t>& channels, std::int64_t temporal,
            std::int64_t hidden, std::int64_t classes)
      : frames_(frames) {
    for (std::size_t i = 0; i < channels.size(); ++i) {
      const std::string index = std::to_string(i);
      convs_.push_back(register_module("conv" + index,
                                       nn::Conv2d(nn::Conv2dOptions(in, channels[i], 3).padding(1).bias(false))));
      norms_.push_back(register_module("bn" + index, nn::BatchNorm2d(channels[i])));
      in = channels[i];
    }
    temporal_conv_ = register_module("temporal_conv", nn::Conv1d(nn::Conv1dOptions(in, temporal, 5).padding(2).bias(false)));
    temporal_bn_ = register_module("temporal_bn", nn::BatchNorm1d(temporal));
    lstm_ = register_module("lstm", nn::LSTM(nn::LSTMOptions(temporal, hidden).batch_first(true).bidirectional(true)));
    fc_ = register_module("fc", nn::Linear(2 * hidden, classes));
  }

  torch::Tensor forward(torch::Tensor x) override { return fc_->forward(std::get<0>(lstm_->forward(steps(x)))); }

  plugtrain::TensorMap forward_batch(const plugtrain::TensorMap& batch) override {
    const torch::Tensor x = steps(batch.at("input"));
    const auto given = batch.find("input_lengths");
    if (given == batch.end()) return {{"output", fc_->forward(std::get<0>(lstm_->forward(x)))}};
    const torch::Tensor frames = given->second.to(torch::kCPU, torch::kLong);
    if (frames.max().item<std::int64_t>() > frames_)
      throw std::invalid_argument("tfnet_lite: a clip of " + std::to_string(frames.max().item<std::int64_t>()) +
                                  " frames, more than model.frames = " + std::to_string(frames_) +
                                  " (set [dataset] frames and model.frames alike)");
    // K5-P2 halves the steps; every clip keeps at least one.
    const torch::Tensor lengths = frames.div(2, "floor").clamp_min(1);
    namespace rnn = torch::nn::utils::rnn;
    const rnn::PackedSequence packed = rnn::pack_padded_sequence(x, lengths, /*batch_first=*/true, /*enforce_sorted=*/false);
    const torch::Tensor read = std::get<0>(rnn::pad_packed_sequence(std::get<0>(lstm_->forward_with_packed_input(packed)),
                                                                    /*batch_first=*/true, 0.0, x.size(1)));
    return {{"output", fc_->forward(read)}, {"output_lengths", lengths.to(x.device())}};
  }

 private:
  // The clip's per-step features after the frame CNN and the temporal convolution: (N, T / 2, temporal).
  torch::Tensor steps(torch::Tensor x) {
    const std::int64_t n = x.size(0), c = x.size(1), h = x.size(2) / frames_, w = x.size(3);
    // (N, C, T x H, W) -> (N x T, C, H, W): every frame through the same 2-D CNN.
    x = x.reshape({n, c, frames_, h, w}).permute({0, 2, 1, 3, 4}).reshape({n * frames_, c, h, w});
    for (std::size_t i = 0; i < convs_.size(); ++i)
      x = torch::max_pool2d(norms_[i]->forward(convs_[i]->forward(x)).relu_(), {2, 2});
    x = x.mean({2, 3}).reshape({n, frames_, -1}).transpose(1, 2);  // (N, features, T)
    x = torch::max_pool1d(temporal_bn_->forward(temporal_conv_->forward(x)).relu_(), {2});  // K5-P2: T / 2
    return x.transpose(1, 2).contiguous();  // (N, T / 2, temporal)
  }

  std::int64_t frames_;
  std::vector<nn::Conv2d> convs_;
  std::vector<nn::BatchNorm2d> norms_;
  nn::Conv1d temporal_conv_{nullptr};
  nn::BatchNorm1d temporal_bn_{nullptr};
  nn::LSTM lstm_{nullptr};
  nn::Linear fc_{nullptr};
};

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument("tfnet_lite: " + what); }

std::shared_ptr<plugtrain::Model> make(const plugtrain::ModelInputs& inputs, const plugtrain::Options& o) {
  const auto& s = inputs.input_shape;
  if (s.size() != 3) fail("input must be a clip of frames stacked top to bottom, (C, frames x H, W)");
  const std::int64_t frames = o.integer("frames");
  if (s[1] % frames != 0)
    fail("the input's height " + std::to_string(s[1]) + " is not model.frames = " + std::to_string(frames) +
         " frames stacked (set [dataset] frames and model.frames alike)");
  const auto& channels = o.integers("channels");
  const std::int64_t shrink = std::int64_t{1} << channels.size();
  if (s[1] / frames < shrink || s[2] < shrink)
    fail("frames of " + std::to_string(s[1] / frames) + "x" + std::to_string(s[2]) + " are smaller than the " +
         std::to_string(shrink) + "x" + std::to_string(shrink) + " its " + std::to_string(channels.size()) + " poolings need");
  return std::make_shared<TfnetLite>(s[0], frames, channels, o.integer("temporal"), o.integer("hidden"), inputs.num_classes);
}

}  // namespace

plugtrain::ModelSpec tfnet_lite_spec() {
  using plugtrain::OptionType;
  return {"tfnet_lite",
          "continuous sign-language recognition: a 2-D CNN per frame, a temporal 1-D conv (K5-P2), a bidirectional "
          "LSTM; per-step gloss scores (N, frames / 2, classes) for CTC",
          {
              {"frames", OptionType::integer, std::int64_t{32}, "frames per clip, stacked top to bottom in the input (ce-csl's frames)"},
              {"channels", OptionType::integer_list, std::vector<std::int64_t>{32, 64, 128},
               "output channels of each per-frame conv block (3x3, batch norm, relu, 2x2 max-pool)"},
              {"temporal", OptionType::integer, std::int64_t{256}, "channels of the temporal 1-D convolution (kernel 5)"},
              {"hidden", OptionType::integer, std::int64_t{256}, "LSTM width per direction"},
          },
          make,
          /*batch_factory=*/{},
          {plugtrain::DatasetTargets::sequence}};
}

std::vector<plugtrain::OptionRule> tfnet_lite_rules() {
  using plugtrain::OptionRule;
  return {OptionRule("frames").at_least(2).at_most(1024), OptionRule("channels").at_least(1).length(1, 6),
          OptionRule("temporal").at_least(1).at_most(8192), OptionRule("hidden").at_least(1).at_most(8192)};
}

}  // namespace sign_language
