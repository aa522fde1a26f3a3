// plugtrain SDK 5 — optional: a backend plugin's own c10d collective (the extension
// "plugtrain.collective", version 1).
//
// In a ddp run the host all-reduces through a c10d::ProcessGroup. CPU tensors always go through
// LibTorch's Gloo. When a backend's plan names another collective (e.g. "nccl"), the host asks
// the backend for this extension and uses what it creates for the tensors of the plugin's device
// type — torch.distributed's "cpu:gloo,cuda:nccl". A backend without it keeps Gloo (the default).
//
//   void* extension(const char* name, std::uint32_t version) override {
//     return plugtrain::is_extension(name, version, plugtrain::kCollectiveExtension, 1) ? &my_collective_ : nullptr;
//   }
//
// The plugin and the host share one LibTorch (the handshake checks the version), so c10d
// objects cross the boundary as they are.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "plugtrain/plugin.h"

namespace plugtrain {

inline constexpr const char* kCollectiveExtension = "plugtrain.collective";

// Implemented by the host: what one rank's collective is set up with.
class CollectiveSetup {
 public:
  virtual ~CollectiveSetup() = default;
  virtual std::string collective() const = 0;                   // the plan's name for it, e.g. "nccl"
  virtual c10::intrusive_ptr<c10d::Store> store() const = 0;    // the rendezvous, under a prefix of its own
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  virtual int device() const = 0;                                // this rank's device index (the plan's)
  virtual std::chrono::milliseconds timeout() const = 0;        // a collective that waits longer fails
};

// Implemented by the plugin, returned by Backend::extension("plugtrain.collective", 1).
class CollectiveFactory {
 public:
  virtual ~CollectiveFactory() = default;
  // The connected backend, or throws with one line saying why it cannot.
  virtual c10::intrusive_ptr<c10d::Backend> create(const CollectiveSetup& setup) = 0;
};

}  // namespace plugtrain
