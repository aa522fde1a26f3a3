// One unit of a sharded run (backend.strategy = "fsdp"): its parameters as flat parameters (the
// matrices apart from the rest, so optim.decay = "matrices" can treat them apart), gathered
// and released as a whole, with the unit's gradient sum under way.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "distributed/collectives.h"
#include "distributed/flat_parameter.h"

namespace plugtrain {

class ShardedUnit {
 public:
  // options.shard_in_full: the parameters are never released (float32 shards live in them).
  ShardedUnit(std::string name, const std::vector<at::Tensor>& parameters, int rank, int world_size,
              const FlatOptions& options);

  const std::string& name() const { return name_; }
  const std::vector<std::unique_ptr<FlatParameter>>& flats() const { return flats_; }
  std::int64_t full_bytes() const;  // all its parameters, gathered
  std::int64_t shard_bytes() const;

  // Gathering: started (asynchronously, the memory allocated first), then waited for.
  // start_gather() on a gathered or gathering unit does nothing.
  void start_gather(Collectives& collectives);
  void finish_gather();
  bool gathered() const { return gathered_; }
  bool gathering() const { return gathering_.started(); }
  // The shards changed (an optimizer step): what is gathered must be gathered again.
  void mark_stale() { gathered_ = false; }
  void release();
  // The memory allocated and counted as gathered without a collective: its values are about to
  // be written (a checkpoint's).
  void allocate_as_gathered();

  // The gradient sum over the ranks: each rank's part summed into its shard's gradient
  // (reduce-scatter), or, for optimizer-state sharding alone, the whole of it (all-reduce).
  void start_reduce_scatter(Collectives& collectives);
  void all_reduce_gradients(Collectives& collectives);
  void finish_reduce();
  bool reduced() const { return reduced_; }
  void reset_reduced() { reduced_ = false; }

 private:
  // The flat parameters' gradients into gradients_, once per step; false when there is nothing
  // (more) to sum.
  bool take_gradients();

  std::string name_;
  std::vector<std::unique_ptr<FlatParameter>> flats_;
  int rank_ = 0;
  bool gathered_ = false, reduced_ = false;
  PendingCollective gathering_, reducing_;
  std::vector<at::Tensor> gather_inputs_;                // alive while gathering_ travels
  std::vector<at::Tensor> gradients_, gradient_shards_;  // alive while reducing_ travels
};

}  // namespace plugtrain
