// The progress bar on a terminal (steps, loss, samples/s, ETA), redrawn at most every 100 ms
// and cleared before any line is printed. On the host CPU it shows the step's loss; on an
// accelerator, where reading it would make the host wait for the device, the last logged one.
#pragma once

#include <cmath>
#include <iosfwd>

#include "logging/progress_bar.h"
#include "train/callback.h"

namespace plugtrain {

class ProgressBarCallback final : public Callback {
 public:
  ProgressBarCallback(std::ostream& terminal, bool reads_each_loss)
      : bar_(terminal, /*color=*/true), reads_each_loss_(reads_each_loss) {}
  void on_epoch_start(const LoopState& state) override { bar_.start(state.epoch, state.epochs, state.steps_per_epoch); }
  void on_step_end(const LoopState& state, const at::Tensor& loss) override {
    if (!bar_.due(state.step_in_epoch)) return;
    if (reads_each_loss_) shown_loss_ = loss.item<double>();
    bar_.update(state.step_in_epoch, shown_loss_, state.epoch_samples);
  }
  void on_log_step(const LoopState&, const StepFigures& figures) override {
    shown_loss_ = figures.loss;
    bar_.clear();
  }
  void on_epoch_end(LoopState&, const EpochMetrics&) override { bar_.clear(); }
  void on_train_end(LoopState&) override { bar_.clear(); }

 private:
  ProgressBar bar_;
  bool reads_each_loss_;
  double shown_loss_ = std::nan("");  // the step's (CPU) or the last logged one; none yet
};

}  // namespace plugtrain
