// An exponential moving average of the model's weights (train.ema_decay), as timm's ModelEmaV3:
// after every optimizer step, ema = decay * ema + (1 - decay) * weights for every floating
// parameter and buffer (batch-norm statistics included; integer buffers are copied). With
// warm-up, the decay after optimizer step t + 1 is min(decay, 1 - t^(-2/3)) (0 after the first), so the average follows the fast
// early weights instead of remembering the random start. Saved in checkpoints (the "ema"
// record); `plugtrain export --ema` exports it.
#pragma once

#include <cstdint>

#include "train/weight_average.h"

namespace plugtrain {

class ModelEma {
 public:
  ModelEma(Model& model, double decay, bool warmup) : average_(model, /*with_buffers=*/true), decay_(decay), warmup_(warmup) {}

  // After optimizer step `step` (1-based, the run's).
  void update(std::int64_t step) { average_.lerp(1.0 - decay_at(step)); }
  // The decay used after step `step`.
  double decay_at(std::int64_t step) const;

  WeightAverage& average() { return average_; }
  const WeightAverage& average() const { return average_; }

 private:
  WeightAverage average_;
  double decay_;
  bool warmup_;
};

}  // namespace plugtrain
