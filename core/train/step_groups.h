// Accumulation's arithmetic (train.accumulate_steps): an epoch's batches in groups of
// `accumulate` (the last group may be shorter), each group one optimizer step. The epoch's last
// batch holds what is left of the shard, so a group's samples are counted, not assumed.
#pragma once

#include <algorithm>
#include <cstdint>

namespace plugtrain {

// The group a batch belongs to.
struct StepGroup {
  std::int64_t size = 1;     // batches in the group
  std::int64_t micro = 0;    // this batch's place in it, 0-based
  std::int64_t samples = 0;  // samples in the whole group
  bool full = false;         // every batch of it is a full loader batch, and there are `accumulate` of them
  bool first() const { return micro == 0; }
  bool last() const { return micro == size - 1; }  // its optimizer step follows this batch
};

class StepGroups {
 public:
  StepGroups(std::int64_t steps_per_epoch, std::int64_t accumulate, std::int64_t loader_batch,
             std::int64_t samples_per_epoch)
      : steps_per_epoch_(steps_per_epoch),
        accumulate_(std::max<std::int64_t>(1, accumulate)),
        loader_batch_(loader_batch),
        last_batch_(samples_per_epoch - (steps_per_epoch - 1) * loader_batch) {}

  std::int64_t accumulate() const { return accumulate_; }
  // The schedule counts optimizer steps: one per group.
  std::int64_t optimizer_steps_per_epoch() const { return (steps_per_epoch_ + accumulate_ - 1) / accumulate_; }

  // The group of the epoch's batch `index` (0-based).
  StepGroup of(std::int64_t index) const {
    StepGroup g;
    const std::int64_t begin = index / accumulate_ * accumulate_;
    g.size = std::min(accumulate_, steps_per_epoch_ - begin);
    g.micro = index - begin;
    const bool holds_last_batch = begin + g.size == steps_per_epoch_;
    g.samples = g.size * loader_batch_ - (holds_last_batch ? loader_batch_ - last_batch_ : 0);
    g.full = g.samples == accumulate_ * loader_batch_;
    return g;
  }

 private:
  std::int64_t steps_per_epoch_, accumulate_, loader_batch_, last_batch_;
};

}  // namespace plugtrain
