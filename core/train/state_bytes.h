// The memory a process holds for the model's training state: its parameters, their gradients
// and the optimizer's state, each storage counted once (parameters viewing one buffer, a
// released fsdp unit's parameters none). summary.json's "state_bytes": what sharding saves.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

namespace torch::optim {
class Optimizer;
}

namespace plugtrain {

std::int64_t training_state_bytes(const std::vector<at::Tensor>& model_parameters,
                                  const std::vector<at::Tensor>& stepped_parameters,
                                  torch::optim::Optimizer& optimizer);

}  // namespace plugtrain
