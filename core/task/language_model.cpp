// language_model: the next token at every position of a window (a GPT's objective, nanoGPT's
// and llm.c's loss). The model outputs (N, T, vocabulary) scores; the targets are the (N, T)
// tokens that follow each input position. Loss: mean cross-entropy over every position
// (positions whose target is below 0 are left out, as nanoGPT's ignore_index = -1).
//
// Metrics (evaluation): perplexity exp(mean cross-entropy), bits per token (mean cross-entropy
// / ln 2: bits per character for a character vocabulary, per byte for a byte one) and the share
// of positions whose most likely next token is right. Training counts the last only: the loss is
// already the mean cross-entropy, and a second one per step would cost a log-softmax over the
// vocabulary.
#include <cmath>

#include <ATen/ATen.h>

#include "task/builtin_tasks.h"

namespace plugtrain {

namespace {

class LanguageModel : public SpecifiedTask {
 public:
  LanguageModel(const TaskDefinition& spec, const TaskInputs& inputs, const Options& options)
      : SpecifiedTask(spec), vocabulary_(inputs.num_classes) {
    (void)options;
  }

  std::int64_t model_outputs() const override { return vocabulary_; }

  at::Tensor loss(const at::Tensor& outputs, const at::Tensor& targets) const override {
    check_outputs(outputs, targets, /*same_shape=*/false);
    return at::cross_entropy_loss(outputs.flatten(0, -2), targets.flatten(), {}, at::Reduction::Mean, /*ignore_index=*/-1);
  }

  // Training: [right next tokens, counted positions]. Evaluation: [summed cross-entropy, right
  // next tokens, counted positions]. All on the device: nothing here waits for it.
  std::int64_t statistics_size(Pass pass) const override { return pass == Pass::training ? 2 : 3; }

  at::Tensor statistics(Pass pass, const at::Tensor& outputs, const at::Tensor& targets) const override {
    const at::Tensor scores = outputs.detach().flatten(0, -2);
    const at::Tensor wanted = targets.flatten();
    const at::Tensor counted = wanted.ge(0);
    const at::Tensor right = scores.argmax(1).eq(wanted).logical_and(counted).sum().to(at::kFloat);
    const at::Tensor positions = counted.sum().to(at::kFloat);
    if (pass == Pass::training) return at::stack({right, positions});
    const at::Tensor summed = at::cross_entropy_loss(scores.to(at::kFloat), wanted, {}, at::Reduction::Sum, -1);
    return at::stack({summed, right, positions});
  }

  std::vector<MetricValue> metric_values(Pass pass, const std::vector<double>& totals, double samples) const override {
    (void)samples;
    if (pass == Pass::training) return {{"accuracy", totals[1] > 0 ? totals[0] / totals[1] : 0}};
    const double positions = totals[2];
    const double mean_nats = positions > 0 ? totals[0] / positions : 0;
    return {{"bits_per_token", mean_nats / std::log(2.0)},
            {"perplexity", std::exp(mean_nats)},
            {"accuracy", positions > 0 ? totals[1] / positions : 0}};
  }

 private:
  std::int64_t vocabulary_;
};

}  // namespace

TaskDefinition language_model_task() {
  TaskDefinition spec;
  spec.name = "language_model";
  spec.description = "the next token at every position: cross-entropy; bits per token, perplexity, next-token accuracy";
  spec.target_kind = TargetKind::next_token;
  spec.training_metrics = {{"accuracy", Direction::max, "share of positions whose most likely next token is right"}};
  spec.evaluation_metrics = {
      {"bits_per_token", Direction::min,
       "mean cross-entropy in bits: bits per character (character vocabulary) or per byte (byte vocabulary)"},
      {"perplexity", Direction::min, "exp of the mean cross-entropy per token"},
      spec.training_metrics[0]};
  make_with<LanguageModel>(spec);
  return spec;
}

}  // namespace plugtrain
