// A checkpoint must load where the device that wrote it is not: on the CPU, or in a process
// that never loads the device's plugin (`plugtrain export`). LibTorch writes each tensor with
// its device's name, and a device LibTorch does not know (a PrivateUse1 name such as "emu")
// cannot even be parsed there. So the optimizer's state is written from host copies.
#pragma once

#include <functional>

#include <torch/optim/optimizer.h>

namespace plugtrain {

// Runs `save` with every tensor of the optimizer's state replaced by a CPU copy, then puts the
// device tensors back: the same handles, so the multi-tensor lists and recorded graphs that
// hold them stay valid. The state classes of plugtrain's optimizer table are known; another
// state class keeps its tensors where they are.
void with_optimizer_state_on_host(torch::optim::Optimizer& optimizer, const std::function<void()>& save);

}  // namespace plugtrain
