#include "train/callbacks/early_stopping.h"

namespace plugtrain {

EarlyStopping::EarlyStopping(Metric monitor, std::optional<Direction> mode, std::int64_t patience, double min_delta)
    : monitor_(monitor), patience_(patience), best_(BestSoFar::maximises(monitor_, mode), min_delta) {}

void EarlyStopping::on_epoch_end(LoopState& state, const EpochMetrics& m) {
  const std::optional<double> value = m.metric(monitor_);
  if (!value) return;
  if (best_.offer(*value, m.epoch)) {
    epochs_without_improvement_ = 0;
  } else if (++epochs_without_improvement_ >= patience_) {
    state.request_stop(StopReason::early_stopping, std::string("early stopping: ") + word_of(monitor_) + " did not improve for " +
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
