// Mixup and CutMix on training batches, with timm's semantics (timm.data.Mixup, mode "batch"):
// each batch is mixed with probability `prob`, by CutMix with probability `switch_prob` when
// both are on; lam comes from Beta(alpha, alpha); the partner of sample i is sample N-1-i (the
// batch reversed); CutMix pastes the partner's box and corrects lam to the box's true area. The
// targets become lam * onehot(y) + (1 - lam) * onehot(y reversed), which the classification
// task's cross-entropy takes as class probabilities (its label smoothing then applies as timm's).
//
// The images are mixed where the batch lives (on the device, with the data on the device too);
// the random draws are the host's, seeded by (seed, epoch, batch), so a resumed run mixes every
// batch exactly as the first run did.
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

#include "data/batch_loader.h"

namespace plugtrain {

struct MixSettings {
  double mixup_alpha = 0, cutmix_alpha = 0;
  double prob = 1, switch_prob = 0.5;
  std::int64_t classes = 0;
  std::uint64_t seed = 0;
  bool enabled() const { return mixup_alpha > 0 || cutmix_alpha > 0; }
};

// What a mixed batch trains on, and the targets its training statistics count.
struct MixedBatch {
  data::Batch batch;        // inputs mixed; targets class probabilities (N, classes) when mixed
  at::Tensor hard_targets;  // each sample's larger share: y where lam >= 0.5, else its partner's
  double lam = 1;           // 1: not mixed
  bool cutmix = false;
};

class BatchMixer {
 public:
  explicit BatchMixer(MixSettings settings) : settings_(settings) {}
  // Batch `index` (0-based) of epoch `epoch`.
  MixedBatch mix(const data::Batch& batch, std::int64_t epoch, std::int64_t index) const;

 private:
  MixSettings settings_;
};

}  // namespace plugtrain
