#include "optim/multi_tensor_lists.h"

#include <ATen/ATen.h>
#include <c10/core/TensorOptions.h>

namespace plugtrain {

at::Tensor laid_out_as(const at::Tensor& t, const at::Tensor& p) {
  if (t.strides() == p.strides()) return t;
  return at::empty_like(p).copy_(t);
}

bool GroupLists::gather(const std::vector<at::Tensor>& group_params, std::int64_t options_shape) {
  grads.clear();
  bool same = valid && shape == options_shape;
  std::size_t n = 0;
  for (const auto& p : group_params) {
    const at::Tensor& g = p.grad();
    if (!g.defined()) continue;
    if (same && (n >= keys.size() || keys[n] != p.unsafeGetTensorImpl())) same = false;
    grads.push_back(g);
    ++n;
  }
  return same && n == keys.size();
}

void GroupLists::reset(const std::vector<at::Tensor>& group_params, std::int64_t options_shape) {
  valid = false;
  shape = options_shape;
  keys.clear();
  params.clear();
  state.clear();
  counts.clear();
  fresh.clear();
  steps = at::Tensor();
  step_views.clear();
  for (const auto& p : group_params)
    if (p.grad().defined()) {
      keys.push_back(p.unsafeGetTensorImpl());
      params.push_back(p);
    }
}

const at::Tensor& GroupLists::lr_tensor(double value) {
  const c10::Device device = params.front().device();
  if (!lr.defined() || lr.device() != device) {
    // The CPU kernels read it as a double; the CUDA ones as a float on the device.
    lr = at::full({}, value, at::TensorOptions().device(device).dtype(device.is_cpu() ? at::kDouble : at::kFloat));
    lr_value = value;
  } else if (value != lr_value) {
    lr.fill_(value);
    lr_value = value;
  }
  return lr;
}

// One float32 per parameter on its device, as PyTorch keeps them for its fused optimizers.
void GroupLists::make_step_counts() {
  std::vector<float> values;
  for (const std::int64_t* count : counts) values.push_back(float(*count));
  steps = at::tensor(values, at::TensorOptions().dtype(at::kFloat)).to(params.front().device());
  step_views.clear();
  for (std::size_t i = 0; i < values.size(); ++i) step_views.push_back(steps.select(0, std::int64_t(i)));
}

void GroupLists::lay_out_grads() {
  for (std::size_t i = 0; i < grads.size(); ++i)
    if (grads[i].strides() != params[i].strides()) grads[i] = laid_out_as(grads[i], params[i]);
}

}  // namespace plugtrain
