// For the distributed sources only: the c10d objects behind Collectives. Kept out of
// collectives.h so the trainer does not parse the c10d (and gloo) headers.
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "distributed/collectives.h"

namespace plugtrain {

struct Collectives::Impl {
  c10::intrusive_ptr<c10d::Store> tcp_store;  // the connection
  c10::intrusive_ptr<c10d::Store> store;      // the same, under this attempt's key prefix
  c10::intrusive_ptr<c10d::ProcessGroup> group;
  // A plugin's collective for its device's tensors (NCCL), set by attach_device_collective.
  // It must be shut down (or aborted, after a failure) before it is destroyed.
  c10::intrusive_ptr<c10d::Backend> device_backend;
  bool failed = false;  // a failure was announced or explained
};

struct PendingCollective::Work {
  c10::intrusive_ptr<c10d::Work> work;
};

}  // namespace plugtrain
