// The best value of a monitored metric so far, and when it came. One type for everything that
// tracks one: the best headline test metric of the summary, the checkpoint monitor of save = "best",
// early stopping's monitor.
#pragma once

#include <cstdint>
#include <optional>

#include "checkpoint/state_section.h"
#include "config/choices.h"

namespace plugtrain {

class BestSoFar {
 public:
  // maximise: higher is better. min_delta: how much better a value must be to count.
  explicit BestSoFar(bool maximise = true, double min_delta = 0.0) : maximise_(maximise), min_delta_(min_delta) {}

  // True (and kept) when `value` is the first one or beats the best by more than min_delta.
  bool offer(double value, std::int64_t epoch) {
    const bool better = !has_value_ || (maximise_ ? value > best_ + min_delta_ : value < best_ - min_delta_);
    if (better) {
      best_ = value;
      epoch_ = epoch;
      has_value_ = true;
    }
    return better;
  }

  bool has_value() const { return has_value_; }
  double value() const { return best_; }
  std::int64_t epoch() const { return epoch_; }  // 0 when there is none (or it was not recorded)

  // Back to a checkpointed state.
  void restore(bool has_value, double value, std::int64_t epoch) {
    has_value_ = has_value;
    best_ = value;
    epoch_ = epoch;
  }
  // As part of its owner's checkpoint section.
  void save(StateSection& out) const {
    out.put_flag("has_best", has_value_);
    out.put_real("best", best_);
    out.put_int("best_epoch", epoch_);
  }
  void load(const StateSection& in) { restore(in.flag_at("has_best"), in.real_at("best"), in.int_at("best_epoch")); }

 private:
  bool maximise_;
  double min_delta_;
  bool has_value_ = false;
  double best_ = 0;
  std::int64_t epoch_ = 0;
};

}  // namespace plugtrain
