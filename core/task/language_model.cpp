// language_model: the next token at every position of a window (a GPT's objective, nanoGPT's
// and llm.c's loss). The model outputs (N, T, vocabulary) scores; the targets are the (N, T)
// tokens that follow each input position. Loss: mean cross-entropy over every position
// (positions whose target is below 0 are left out, as nanoGPT's ignore_index = -1).
//
// Metrics (evaluation): perplexity exp(mean cross-entropy), bits per token (mean cross-entropy
// / ln 2: bits per character for a character vocabulary, per byte for a byte one), bits per
// UTF-8 byte of the predicted text (the one figure that compares character, byte and sub-word
// models: the summed bits over the summed bytes of the target tokens, each token's bytes from its
// text in the data set's vocabulary) and the share of positions whose most likely next token is
// right. Training counts the last only: the loss is
// already the mean cross-entropy, and a second one per step would cost a log-softmax over the
// vocabulary.
#include <cmath>
#include <limits>

#include <ATen/ATen.h>

#include "task/builtin_tasks.h"
#include "util/text.h"

namespace plugtrain {

namespace {

class LanguageModel : public SpecifiedTask {
 public:
  LanguageModel(const TaskDefinition& spec, const TaskInputs& inputs, const Options& options)
      : SpecifiedTask(spec), vocabulary_(inputs.num_classes), token_bytes_(bytes_per_token(inputs)) {
    (void)options;
  }

  void to(c10::Device device) override {
    if (token_bytes_.defined()) token_bytes_ = token_bytes_.to(device);
  }

  std::int64_t model_outputs() const override { return vocabulary_; }

  at::Tensor loss(const at::Tensor& outputs, const at::Tensor& targets) const override {
    check_outputs(outputs, targets, /*same_shape=*/false);
    return at::cross_entropy_loss(outputs.flatten(0, -2), targets.flatten(), {}, at::Reduction::Mean, /*ignore_index=*/-1);
  }

  // Training: [right next tokens, counted positions]. Evaluation: [summed cross-entropy, right
  // next tokens, counted positions, bytes of the counted targets (when the vocabulary has text)].
  // All on the device: nothing here waits for it.
  std::int64_t statistics_size(TaskPass pass) const override {
    return pass == TaskPass::training ? 2 : token_bytes_.defined() ? 4 : 3;
  }

  at::Tensor statistics(TaskPass pass, const at::Tensor& outputs, const at::Tensor& targets) const override {
    const at::Tensor scores = outputs.detach().flatten(0, -2);
    const at::Tensor wanted = targets.flatten();
    const at::Tensor counted = wanted.ge(0);
    const at::Tensor right = scores.argmax(1).eq(wanted).logical_and(counted).sum().to(at::kFloat);
    const at::Tensor positions = counted.sum().to(at::kFloat);
    if (pass == TaskPass::training) return at::stack({right, positions});
    const at::Tensor summed = at::cross_entropy_loss(scores.to(at::kFloat), wanted, {}, at::Reduction::Sum, -1);
    if (!token_bytes_.defined()) return at::stack({summed, right, positions});
    const at::Tensor bytes = token_bytes_.index_select(0, wanted.clamp_min(0)).mul(counted).sum();
    return at::stack({summed, right, positions, bytes});
  }

  std::vector<MetricValue> metric_values(TaskPass pass, const std::vector<double>& totals,
                                         double samples) const override {
    (void)samples;
    if (pass == TaskPass::training) return {{"accuracy", totals[1] > 0 ? totals[0] / totals[1] : 0}};
    const double positions = totals[2];
    const double mean_nats = positions > 0 ? totals[0] / positions : 0;
    // No text for the ids (a tokens data set without itos): no bytes to count, NaN says so.
    const double bytes = totals.size() > 3 ? totals[3] : 0;
    const double bits_per_byte =
        bytes > 0 ? totals[0] / std::log(2.0) / bytes : std::numeric_limits<double>::quiet_NaN();
    return {{"bits_per_token", mean_nats / std::log(2.0)},
            {"bits_per_byte", bits_per_byte},
            {"perplexity", std::exp(mean_nats)},
            {"accuracy", positions > 0 ? totals[1] / positions : 0}};
  }

 private:
  // Each token's UTF-8 bytes, from its text (util/text.h's token_bytes: "<0x0A>", a byte
  // vocabulary's or SentencePiece's byte piece, is one byte); a control piece ("") none. Undefined when the vocabulary
  // has no text (no names, or ids named by their numbers).
  static at::Tensor bytes_per_token(const TaskInputs& inputs) {
    const std::vector<std::string>& names = inputs.class_names;
    if (names.empty() || std::int64_t(names.size()) != inputs.num_classes) return {};
    bool numbered = true;
    std::vector<float> bytes;
    for (std::size_t i = 0; i < names.size(); ++i) {
      const std::string& n = names[i];
      numbered = numbered && n == std::to_string(i);
      bytes.push_back(float(plugtrain::token_bytes(n).size()));
    }
    if (numbered) return {};
    return at::tensor(bytes);
  }

  std::int64_t vocabulary_;
  at::Tensor token_bytes_;  // float (vocabulary): each token's bytes
};

}  // namespace

TaskDefinition language_model_task() {
  TaskDefinition spec;
  spec.name = "language_model";
  spec.description = "the next token at every position: cross-entropy; bits per token, perplexity, next-token accuracy";
  spec.target_kind = DatasetTargets::next_token;
  spec.training_metrics = {
      {"accuracy", MetricGoal::maximize, "share of positions whose most likely next token is right"}};
  spec.evaluation_metrics = {
      {"bits_per_token", MetricGoal::minimize,
       "mean cross-entropy in bits: bits per character (character vocabulary) or per byte (byte vocabulary)"},
      {"bits_per_byte", MetricGoal::minimize,
       "cross-entropy in bits per UTF-8 byte of the predicted text: compares character, byte and sub-word models "
       "(none for a tokens data set without itos)"},
      {"perplexity", MetricGoal::minimize, "exp of the mean cross-entropy per token"},
      spec.training_metrics[0]};
  make_with<LanguageModel>(spec);
  return spec;
}

}  // namespace plugtrain
