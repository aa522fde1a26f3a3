// ddp's and fsdp's collective for the emulated device (the extension "plugtrain.collective"): Gloo on host
// copies of the tensors (staged_collective.cpp).
#pragma once

#include "plugtrain/collective.h"

namespace emulated {

class StagedCollective final : public plugtrain::CollectiveFactory {
 public:
  c10::intrusive_ptr<c10d::Backend> create(const plugtrain::CollectiveSetup& setup) override;
};

}  // namespace emulated
