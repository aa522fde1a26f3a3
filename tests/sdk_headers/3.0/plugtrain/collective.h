// plugtrain SDK — optional: a backend plugin's own c10d collective backend (SDK 2.1).
//
// In a ddp run the host all-reduces through a c10d::ProcessGroup. CPU tensors always go
// through LibTorch's Gloo. When a backend's MultiDevicePlan names another collective (e.g.
// "nccl"), the host asks the plugin for it through the export below and uses it for the
// tensors of the plugin's device type — torch.distributed's "cpu:gloo,cuda:nccl". A plugin
// without this export keeps Gloo for its tensors too.
//
// The plugin and the host share one LibTorch (the handshake in abi.h checks the version), so
// c10d objects cross the boundary as they are.
#pragma once

#include <chrono>
#include <string>

#include <boost/dll/alias.hpp>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

namespace plugtrain {

struct CollectiveSetup {
  std::string collective;                  // the plan's name for it, e.g. "nccl"
  c10::intrusive_ptr<c10d::Store> store;   // the rendezvous, under a prefix of this backend's own
  int rank = 0, world_size = 1;
  int device = 0;                          // this rank's device index (the plan's device)
  std::chrono::milliseconds timeout{0};    // a collective that waits longer fails
};

// Returns the connected backend, or throws with one line saying why it cannot.
using CreateCollective = c10::intrusive_ptr<c10d::Backend>(const CollectiveSetup& setup);

}  // namespace plugtrain

// PLUGTRAIN_COLLECTIVE_BACKEND(fn): fn has the CreateCollective signature. Use once, at global
// scope, in one source file of a backend plugin.
#define PLUGTRAIN_COLLECTIVE_BACKEND(FN) BOOST_DLL_ALIAS(FN, plugtrain_create_collective)
