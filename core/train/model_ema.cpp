#include "train/model_ema.h"

#include <algorithm>
#include <cmath>

namespace plugtrain {

double ModelEma::decay_at(std::int64_t step) const {
  if (!warmup_) return decay_;
  // timm ModelEmaV3.get_decay: step - 1, gamma 1, power 2/3; 0 (a copy) at the first update.
  const double t = double(std::max<std::int64_t>(0, step - 1));
  if (t <= 0) return 0.0;
  return std::clamp(1.0 - std::pow(1.0 + t, -2.0 / 3.0), 0.0, decay_);
}

}  // namespace plugtrain
