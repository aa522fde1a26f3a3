#include "train/callbacks/early_stopping.h"

namespace plugtrain {

EarlyStopping::EarlyStopping(Monitor monitor, std::int64_t patience, double min_delta)
    : monitor_(std::move(monitor)), patience_(patience), best_(monitor_.direction == Direction::max, min_delta) {}

void EarlyStopping::on_epoch_end(LoopState& state, const EpochMetrics& m) {
  const std::optional<double> value = m.metric(monitor_.name);
  if (!value) return;
  if (best_.offer(*value, m.epoch)) {
    epochs_without_improvement_ = 0;
  } else if (++epochs_without_improvement_ >= patience_) {
    state.request_stop(StopReason::early_stopping, "early stopping: " + monitor_.name + " did not improve for " +
                                                       std::to_string(patience_) + " evaluated epochs");
  }
}

void EarlyStopping::save_state(StateSection& out) const {
  best_.save(out);
  out.put_int("epochs_without_improvement", epochs_without_improvement_);
}

void EarlyStopping::load_state(const StateSection& in) {
  best_.load(in);
  epochs_without_improvement_ = in.int_at("epochs_without_improvement");
}

}  // namespace plugtrain
