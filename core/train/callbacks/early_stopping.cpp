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

void EarlyStopping::save_state(TrainingProgress& record) const {
  record.stopping_best = best_.value();
  record.stopping_has_best = best_.has_value();
  record.epochs_without_improvement = epochs_without_improvement_;
}

void EarlyStopping::load_state(const TrainingProgress& record) {
  best_.restore(record.stopping_has_best, record.stopping_best, 0);
  epochs_without_improvement_ = record.epochs_without_improvement;
}

}  // namespace plugtrain
