// The progress bar on a terminal (steps, loss, samples/s, ETA), redrawn at most every 100 ms
// and cleared before any line is printed.
#pragma once

#include <iosfwd>

#include "logging/progress_bar.h"
#include "train/callback.h"

namespace plugtrain {

class ProgressBarCallback final : public Callback {
 public:
  explicit ProgressBarCallback(std::ostream& terminal) : bar_(terminal, /*color=*/true) {}
  void on_epoch_start(const LoopState& state) override { bar_.start(state.epoch, state.epochs, state.steps_per_epoch); }
  void on_step_end(const LoopState& state, const at::Tensor& loss) override {
    if (bar_.due(state.step_in_epoch)) bar_.update(state.step_in_epoch, loss.item<double>(), state.epoch_samples);
  }
  void on_log_step(const LoopState&, const StepFigures&) override { bar_.clear(); }
  void on_epoch_end(LoopState&, const EpochMetrics&) override { bar_.clear(); }
  void on_train_end(LoopState&) override { bar_.clear(); }

 private:
  ProgressBar bar_;
};

}  // namespace plugtrain
