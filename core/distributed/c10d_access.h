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
};

}  // namespace plugtrain
