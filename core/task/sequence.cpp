// sequence: a sequence of classes per sample (a text line, a signed sentence), learnt with CTC
// (torch.nn.CTCLoss) from per-step class scores; greedy decoding; character and word error
// rates by edit distance.
//
// The model outputs (N, T, classes + 1) per-step scores: class `blank` is CTC's blank, the
// others are the data set's classes in order (class c is output c, or c + 1 at and after the
// blank). Targets are (N, S) class indices padded with -1. Every sample uses all T steps (a
// padded input's tail is where the model learns to emit blanks), unless the model gives
// "output_lengths" (SDK 3.6, for variable-length inputs): then sample i's steps are its first
// output_lengths[i], in the loss and in decoding.
#include <ATen/ATen.h>

#include "task/builtin_tasks.h"
#include "task/edit_distance.h"
#include "util/error.h"
#include "util/format.h"

namespace plugtrain {

namespace {

class Sequence : public SpecifiedTask {
 public:
  Sequence(const TaskDefinition& spec, const TaskInputs& inputs, const Options& options)
      : SpecifiedTask(spec),
        classes_(inputs.num_classes),
        blank_(options.integer("blank") < 0 ? inputs.num_classes : options.integer("blank")),
        separator_(options.integer("word_separator")) {}

  std::int64_t model_outputs() const override { return classes_ + 1; }

  at::Tensor loss(const at::Tensor& outputs, const at::Tensor& targets) const override { return loss(outputs, targets, {}); }

  at::Tensor loss(const at::Tensor& outputs, const at::Tensor& targets, const TensorMap& more) const override {
    check_outputs(outputs, targets);
    const at::Tensor log_probs = outputs.to(at::kFloat).log_softmax(2).transpose(0, 1);  // (T, N, C)
    const at::Tensor lengths = targets.ge(0).sum(1);
    const at::Tensor input_lengths = steps_of(outputs, more).to(lengths.device());
    // Class c is output c below the blank and c + 1 from it on; padding (-1) stays out of the lengths.
    const at::Tensor labels = targets.add(targets.ge(blank_).to(at::kLong)).clamp_min(0);
    return at::ctc_loss(log_probs, labels, input_lengths, lengths, blank_, at::Reduction::Mean, /*zero_infinity=*/true);
  }

  // [edits over classes, target classes, edits over words, target words, exact sequences].
  std::int64_t statistics_size(TaskPass pass) const override { return pass == TaskPass::training ? 2 : 5; }

  // Decoding and the edit distances run on the host: the batch's best paths (N x T integers)
  // are read back, one device synchronisation per batch.
  at::Tensor statistics(TaskPass pass, const at::Tensor& outputs, const at::Tensor& targets) const override {
    return statistics(pass, outputs, targets, {});
  }

  at::Tensor statistics(TaskPass pass, const at::Tensor& outputs, const at::Tensor& targets,
                        const TensorMap& more) const override {
    // A step past a sample's length is padding: read as the blank, it decodes to nothing.
    at::Tensor paths = outputs.detach().argmax(2);
    if (more.count("output_lengths")) {
      const at::Tensor steps = steps_of(outputs, more).to(paths.device());
      paths.masked_fill_(at::arange(paths.size(1), paths.options()).unsqueeze(0) >= steps.unsqueeze(1), blank_);
    }
    paths = paths.to(at::kCPU, at::kLong).contiguous();
    const at::Tensor truth = targets.to(at::kCPU, at::kLong).contiguous();
    const std::int64_t steps = paths.size(1), length = truth.size(1);
    double totals[5] = {0, 0, 0, 0, 0};
    for (std::int64_t i = 0; i < paths.size(0); ++i) {
      const std::vector<std::int64_t> decoded = greedy_decode(paths.data_ptr<std::int64_t>() + i * steps, steps);
      std::vector<std::int64_t> wanted;
      const std::int64_t* row = truth.data_ptr<std::int64_t>() + i * length;
      for (std::int64_t s = 0; s < length; ++s)
        if (row[s] >= 0) wanted.push_back(row[s]);
      totals[0] += double(edit_distance(decoded, wanted));
      totals[1] += double(wanted.size());
      if (pass == TaskPass::training) continue;
      const auto decoded_words = words(decoded), wanted_words = words(wanted);
      totals[2] += double(edit_distance(decoded_words, wanted_words));
      totals[3] += double(wanted_words.size());
      totals[4] += decoded == wanted ? 1 : 0;
    }
    return at::tensor(std::vector<double>(totals, totals + statistics_size(pass)), at::kDouble).to(outputs.device());
  }

  std::vector<MetricValue> metric_values(TaskPass pass, const std::vector<double>& totals,
                                         double samples) const override {
    auto rate = [](double edits, double length) { return length > 0 ? edits / length : 0; };
    if (pass == TaskPass::training) return {{"cer", rate(totals[0], totals[1])}};
    return {{"cer", rate(totals[0], totals[1])},
            {"wer", rate(totals[2], totals[3])},
            {"sequence_accuracy", samples > 0 ? totals[4] / samples : 0}};
  }

 private:
  // Each sample's real steps: the model's output_lengths, else all T.
  at::Tensor steps_of(const at::Tensor& outputs, const TensorMap& more) const {
    const auto given = more.find("output_lengths");
    if (given == more.end()) return at::full({outputs.size(0)}, outputs.size(1), at::TensorOptions().dtype(at::kLong));
    const at::Tensor& lengths = given->second;
    if (lengths.dim() != 1 || lengths.size(0) != outputs.size(0))
      throw Error("task 'sequence': the model's output_lengths are " + shape_text(lengths.sizes()) + " for " +
                  std::to_string(outputs.size(0)) + " samples (one length per sample)");
    return lengths.to(at::kLong).clamp(0, outputs.size(1));
  }

  void check_outputs(const at::Tensor& outputs, const at::Tensor& targets) const {
    if (outputs.dim() != 3 || outputs.size(0) != targets.size(0) || outputs.size(2) != classes_ + 1 || targets.dim() != 2)
      SpecifiedTask::check_outputs(outputs, targets, /*same_shape=*/false);
  }

  // The best path's classes: repeats merged, blanks dropped, outputs mapped back to classes.
  std::vector<std::int64_t> greedy_decode(const std::int64_t* p, std::int64_t steps) const {
    std::vector<std::int64_t> out;
    std::int64_t previous = -1;
    for (std::int64_t t = 0; t < steps; ++t) {
      if (p[t] != previous && p[t] != blank_) out.push_back(p[t] > blank_ ? p[t] - 1 : p[t]);
      previous = p[t];
    }
    return out;
  }

  // Words: runs of classes between separators (no separator: each class is a word, as a gloss
  // is in sign-language recognition, where WER is over glosses).
  std::vector<std::vector<std::int64_t>> words(const std::vector<std::int64_t>& classes) const {
    std::vector<std::vector<std::int64_t>> out;
    std::vector<std::int64_t> word;
    for (std::int64_t c : classes) {
      if (separator_ < 0) {
        out.push_back({c});
      } else if (c == separator_) {
        if (!word.empty()) out.push_back(std::move(word));
        word.clear();
      } else {
        word.push_back(c);
      }
    }
    if (!word.empty()) out.push_back(std::move(word));
    return out;
  }

  std::int64_t classes_, blank_, separator_;
};

}  // namespace

TaskDefinition sequence_task() {
  TaskDefinition spec;
  spec.name = "sequence";
  spec.description = "a sequence of classes per sample: CTC loss on per-step scores; greedy decoding; CER and WER";
  spec.target_kind = DatasetTargets::sequence;
  spec.options = {
      {"blank", OptionType::integer, std::int64_t(-1),
       "the model output that is CTC's blank (-1: the last, after the data set's classes)"},
      {"word_separator", OptionType::integer, std::int64_t(-1),
       "the class between words, for WER (-1: every class is a word, as glosses are)"},
  };
  spec.rules = {OptionRule("blank").at_least(-1), OptionRule("word_separator").at_least(-1)};
  spec.training_metrics = {
      {"cer", MetricGoal::minimize, "character (class) error rate: edit distance over target length"}};
  spec.evaluation_metrics = {spec.training_metrics[0],
                             {"wer", MetricGoal::minimize, "word error rate: edit distance over words"},
                             {"sequence_accuracy", MetricGoal::maximize, "share of samples decoded exactly"}};
  // LibTorch's ctc_loss copies the length tensors to the host (and sizes its work from them).
  spec.loss_waits_for_host =
      "CTC's loss reads the sequence lengths on the host in every step, and its training error rate decodes the "
      "batch's best paths there";
  make_with<Sequence>(spec);
  return spec;
}

}  // namespace plugtrain
