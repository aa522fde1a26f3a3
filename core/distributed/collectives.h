// The ranks of a multi-process run talking to each other: a c10d TCPStore for the
// rendezvous and a c10d ProcessGroup with LibTorch's Gloo backend for the collectives.
// No collective is home-made; this class only adds what a user needs around them:
// one timeout for everything, and a message naming the rank that died or hung.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/DeviceType.h>

#include "distributed/rendezvous_network.h"
#include "distributed/world.h"

namespace plugtrain {

// A collective of ours that failed or timed out (another rank died or hung, or the network broke).
class CollectiveError : public DistributedError {
 public:
  using DistributedError::DistributedError;
};

// A collective started and not yet waited for (c10d's asynchronous work): the computation
// that follows runs while it travels.
class PendingCollective {
 public:
  struct Work;  // c10d's; see distributed/c10d_access.h
  PendingCollective() = default;
  PendingCollective(std::shared_ptr<Work> work, std::string what, std::chrono::milliseconds timeout);
  // Blocks until it is done. Throws CollectiveError when the others do not take part in time.
  void wait();
  bool started() const { return work_ != nullptr; }

 private:
  std::shared_ptr<Work> work_;
  std::string what_;
  std::chrono::milliseconds timeout_{0};
};

class Collectives {
 public:
  // Connects to the rendezvous and to every other rank (blocks until all have come, at
  // most `timeout`). A collective that waits longer than `timeout` fails.
  // `device_type`: the type of the devices the ranks train on (Gloo carries their tensors
  // until a device collective is attached). `interface`: the network interface to use
  // (distributed.interface; empty: the one that carries this host's traffic to the rendezvous).
  Collectives(const World& world, std::chrono::milliseconds timeout, c10::DeviceType device_type = c10::DeviceType::CPU,
              const std::string& interface = "");
  ~Collectives();
  Collectives(const Collectives&) = delete;
  Collectives& operator=(const Collectives&) = delete;

  int rank() const { return world_.rank; }
  int size() const { return world_.world_size; }
  const World& world() const { return world_; }
  const RendezvousNetwork& network() const { return network_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

  // Element-wise sums over all ranks, in place (CPU tensors through Gloo; a device's through the
  // collective attach_device_collective set for it).
  // Throws CollectiveError when the others do not take part within the timeout.
  void all_reduce_sum(std::vector<at::Tensor>& tensors);
  // Rank 0's values of `tensors` on every rank, in place.
  void broadcast_from_rank_zero(std::vector<at::Tensor>& tensors);
  // Sharded training's two collectives, each over lists of the same length, coalesced and
  // asynchronous: full[i] (world size x shard[i]'s elements) gets every rank's shard[i] in rank
  // order; shard[i] gets this rank's part of the element-wise sum of every rank's full[i].
  PendingCollective all_gather_into(std::vector<at::Tensor>& full, std::vector<at::Tensor>& shards);
  PendingCollective reduce_scatter_sum(std::vector<at::Tensor>& shards, std::vector<at::Tensor>& full);

  // Every rank's `value` of `what` (the experiment's fingerprint) must be rank 0's. Throws
  // DistributedError on every rank, naming the first rank that differs, rank 0 and their nodes.
  void require_same(const std::string& what, const std::string& value);

  // This rank has reached training step `step` (cheap: written to the store at most twice a second).
  void note_step(std::int64_t step);
  // After a collective failed: asks the store which ranks are still there and returns one line
  // naming the rank(s) that died or hung, with what this rank saw.
  std::string explain_failure(const std::string& what_failed, const std::exception& error);
  // This rank is about to exit because of `message`: the others will name it and say why.
  void announce_failure(const std::string& message) noexcept;

  struct Impl;  // c10d objects; see distributed/c10d_access.h
  Impl& impl() { return *impl_; }

 private:
  std::string rank_text(int rank);  // "rank 2 (node n2)", the node as that rank told the store
  World world_;
  RendezvousNetwork network_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<Impl> impl_;
  std::int64_t last_noted_step_ = -1;
  std::chrono::steady_clock::time_point last_note_{};
};

}  // namespace plugtrain
