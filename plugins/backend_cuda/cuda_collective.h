// The CUDA backend's collective for ddp (the extension "plugtrain.collective"): NCCL.
#pragma once

#include "plugtrain/collective.h"

namespace plugtrain::cuda {

class NcclCollective final : public CollectiveFactory {
 public:
  c10::intrusive_ptr<c10d::Backend> create(const CollectiveSetup& setup) override;
};

}  // namespace plugtrain::cuda
