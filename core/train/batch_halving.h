// The out-of-memory policy of the epoch loop: when a step (c10::OutOfMemoryError before its
// optimizer step) runs out of device memory, the samples per step halve and the failed batch is
// trained again as smaller steps; the learning rate follows the batch as optim.lr_scaling says.
// Below data.min_batch_size, or with several processes (each rank's batch must stay the same),
// the run stops instead, with every size tried.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "train/loop_config.h"
#include "train/loop_state.h"

namespace plugtrain {

class BatchHalvingPolicy {
 public:
  BatchHalvingPolicy(const LoopConfig& config, std::int64_t loader_batch, int processes)
      : config_(config), loader_batch_(loader_batch), processes_(processes) {}

  // The halving after the step at `state` (of state.step_batch samples, or the loader's batch)
  // ran out of memory with `error` (LibTorch's first line). Throws Error where it cannot halve.
  BatchHalving next(const std::string& error, const LoopState& state);

 private:
  const LoopConfig& config_;
  std::int64_t loader_batch_;
  int processes_;
  std::vector<std::int64_t> tried_;  // samples per step that ran out of memory, in order
};

}  // namespace plugtrain
