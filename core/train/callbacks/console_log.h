// The lines a person reads: where a resumed run continues, the loss every train.log_interval
// steps, and one line per epoch.
#pragma once

#include <iosfwd>

#include "train/callback.h"

namespace plugtrain {

// The epoch line's short name of a metric ("accuracy" -> "acc"), for every line that prints
// figures the way the epoch line does (`plugtrain evaluate` too).
std::string short_metric_name(const std::string& metric);

class ConsoleLog final : public Callback {
 public:
  explicit ConsoleLog(std::ostream& log) : log_(log) {}
  void on_train_start(LoopState& state) override;
  void on_log_step(const LoopState& state, const StepFigures& figures) override;
  void on_batch_halved(const LoopState& state, const BatchHalving& halving) override;
  void on_epoch_end(LoopState& state, const EpochMetrics& m) override;
  void on_late_test(LoopState& state, const EpochMetrics& m) override;

 private:
  std::ostream& log_;
};

}  // namespace plugtrain
