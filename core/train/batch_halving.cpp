#include "train/batch_halving.h"

#include <algorithm>

#include "optim/optimizers.h"
#include "util/error.h"
#include "util/text.h"

namespace plugtrain {

BatchHalving BatchHalvingPolicy::next(const std::string& error, const LoopState& state) {
  const std::int64_t from = state.step_batch > 0 ? state.step_batch : loader_batch_;
  tried_.push_back(from);
  std::vector<std::string> tried;
  for (auto b : tried_) tried.push_back(std::to_string(b));
  const std::string where = "out of memory at step " + std::to_string(state.step + 1) + " (epoch " +
                            std::to_string(state.epoch) + ") with " + std::to_string(from) +
                            " samples per step (tried " + join(tried) + ")";
  // Every rank of a ddp run must step on the same batch; one rank cannot halve alone.
  if (processes_ > 1)
    throw Error(where + "; with " + std::to_string(processes_) +
                " processes the batch cannot change on one of them: lower data.batch_size or use "
                "data.batch_size = \"auto\" (" +
                error + ")");
  const std::int64_t to = from / 2;
  const std::int64_t lowest = std::max<std::int64_t>(1, config_.min_batch_size);
  if (to < lowest)
    throw Error(where + "; " + std::to_string(to) + " would be below data.min_batch_size = " + std::to_string(lowest) +
                " (" + error + ")");
  BatchHalving h;
  h.epoch = state.epoch;
  h.step = state.step + 1;
  h.from = from;
  h.to = to;
  h.lr_before = state.lr;
  h.lr_after = state.lr * lr_scaling_factor(config_.lr_scaling, double(to) / double(from));
  h.error = error;
  return h;
}

}  // namespace plugtrain
