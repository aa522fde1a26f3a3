// [early_stopping]: stops the fit when the monitored metric has not improved by more than
// min_delta for `patience` evaluated epochs (epochs without that metric do not count).
#pragma once

#include <string>

#include "train/best_so_far.h"
#include "train/callback.h"

namespace plugtrain {

class EarlyStopping final : public Callback, public Stateful {
 public:
  EarlyStopping(Monitor monitor, std::int64_t patience, double min_delta);
  void on_epoch_end(LoopState& state, const EpochMetrics& m) override;
  const char* state_name() const override { return "early_stopping"; }
  void save_state(StateSection& out) const override;
  void load_state(const StateSection& in) override;

  std::int64_t epochs_without_improvement() const { return epochs_without_improvement_; }

 private:
  Monitor monitor_;
  std::int64_t patience_;
  // Tracked apart from the checkpoint's best: the monitors and min_delta may differ.
  BestSoFar best_;
  std::int64_t epochs_without_improvement_ = 0;
};

}  // namespace plugtrain
