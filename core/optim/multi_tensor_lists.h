// One parameter group's tensors as lists, which every form of every optimizer steps
// (optim/multi_tensor_optimizer.h): gathered once (first step, after load, when the
// parameters with a gradient or the options' shape change) and reused, so a step does no
// per-parameter lookup and never waits for the device.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include <ATen/core/Tensor.h>

namespace plugtrain {

struct GroupLists {
  bool valid = false;
  std::int64_t shape = 0;                      // the options the lists were built for (amsgrad, momentum...)
  std::vector<void*> keys;                     // the parameters' TensorImpl, to see whether they changed
  std::vector<at::Tensor> params, grads;       // those with a gradient; grads: this step's
  std::vector<std::vector<at::Tensor>> state;  // state[k][i]: the optimizer's state tensor k of params[i]
  std::vector<std::int64_t*> counts;           // the host step count in each parameter's state (Adam, RMSprop)
  std::vector<bool> fresh;                     // no state yet: its first step makes it (SGD's momentum buffer)
  at::Tensor steps;                            // fused: `counts` as float32 on the device, for the kernels
  std::vector<at::Tensor> step_views;          // one 0-dim view of `steps` per parameter
  at::Tensor lr;                               // fused: the learning rate on the device
  double lr_value = std::numeric_limits<double>::quiet_NaN();

  // This step's gradients of `group_params` into `grads`; false when the lists must be built
  // again (the parameters with a gradient changed, or the options' shape did).
  bool gather(const std::vector<at::Tensor>& group_params, std::int64_t options_shape);
  // Starts building: keys and params (those with a gradient); the state lists empty.
  void reset(const std::vector<at::Tensor>& group_params, std::int64_t options_shape);
  // fused: the learning rate tensor holds `lr` (written only when it changed).
  const at::Tensor& lr_tensor(double lr);
  // fused: `steps` and `step_views` from the host counts.
  void make_step_counts();
  // fused: every gradient laid out as its parameter (laid_out_as).
  void lay_out_grads();
};

// The fused CPU kernels walk each tensor's memory in order: `t` laid out as its parameter `p`
// (a copy only when the strides differ, which they do only when set by hand or loaded from
// elsewhere).
at::Tensor laid_out_as(const at::Tensor& t, const at::Tensor& p);

}  // namespace plugtrain
