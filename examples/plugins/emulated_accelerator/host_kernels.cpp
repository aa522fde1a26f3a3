// Operators the boxed CPU fallback cannot serve, run on host copies by hand and counted like
// every other fallback:
// - convolutions reach aten::convolution_overrideable (and its backward) on a device LibTorch
//   does not know, and their default kernel refuses rather than falling back;
// - native_batch_norm updates its running statistics in place, but they are optional
//   arguments, whose changes the boxed fallback does not copy back: the device's running
//   mean and variance would stay at their initial values and evaluation would go wrong;
// - LibTorch's LSTM cell on a PrivateUse1 device calls the fused cell CUDA has
//   (aten::_thnn_fused_lstm_cell and its backward), which has no CPU kernel to fall back to:
//   it is computed here from its definition.
#include <ATen/ops/convolution.h>
#include <ATen/ops/convolution_backward.h>
#include <ATen/ATen.h>
#include <ATen/ops/native_batch_norm.h>
#include <torch/library.h>

#include "emulated_device.h"

namespace emulated {
namespace {

at::Tensor on_host(const at::Tensor& t) { return t.defined() ? t.to(c10::kCPU) : t; }
at::Tensor back_on(const at::Tensor& t, const at::Tensor& like) { return t.defined() ? t.to(like.device()) : t; }

at::Tensor convolution(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                       at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                       at::IntArrayRef output_padding, int64_t groups) {
  count_fallback("aten::convolution_overrideable");
  const EmulationScope emulating;
  const std::optional<at::Tensor> host_bias = bias && bias->defined() ? std::optional<at::Tensor>(on_host(*bias)) : std::nullopt;
  return back_on(at::convolution(on_host(input), on_host(weight), host_bias, stride, padding, dilation, transposed,
                                 output_padding, groups),
                 input);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> convolution_backward(
    const at::Tensor& grad_output, const at::Tensor& input, const at::Tensor& weight, at::IntArrayRef stride,
    at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed, at::IntArrayRef output_padding, int64_t groups,
    std::array<bool, 3> output_mask) {
  count_fallback("aten::convolution_backward_overrideable");
  const EmulationScope emulating;
  // The bias gradient's size: the output channels (weight dim 0, or dim 1 x groups when transposed).
  const int64_t channels = transposed ? weight.size(1) * groups : weight.size(0);
  const std::vector<int64_t> bias_sizes{channels};
  auto [grad_input, grad_weight, grad_bias] =
      at::convolution_backward(on_host(grad_output), on_host(input), on_host(weight), bias_sizes, stride, padding,
                               dilation, transposed, output_padding, groups, output_mask);
  return {back_on(grad_input, input), back_on(grad_weight, input), back_on(grad_bias, input)};
}

std::optional<at::Tensor> optional_on_host(const std::optional<at::Tensor>& t) {
  return t && t->defined() ? std::optional<at::Tensor>(on_host(*t)) : std::nullopt;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> batch_norm(const at::Tensor& input, const std::optional<at::Tensor>& weight,
                                                          const std::optional<at::Tensor>& bias,
                                                          const std::optional<at::Tensor>& running_mean,
                                                          const std::optional<at::Tensor>& running_var, bool training,
                                                          double momentum, double eps) {
  count_fallback("aten::native_batch_norm");
  const EmulationScope emulating;
  std::optional<at::Tensor> mean = optional_on_host(running_mean), var = optional_on_host(running_var);
  auto [out, save_mean, save_invstd] = at::native_batch_norm(on_host(input), optional_on_host(weight),
                                                             optional_on_host(bias), mean, var, training, momentum, eps);
  if (training) {  // the CPU kernel updated the host copies: the device's statistics follow
    if (mean) running_mean->copy_(*mean);
    if (var) running_var->copy_(*var);
  }
  return {back_on(out, input), back_on(save_mean, input), back_on(save_invstd, input)};
}

// The fused LSTM cell: gates i, f, g, o from the summed pre-activations; the workspace keeps the
// activated gates for the backward.
std::tuple<at::Tensor, at::Tensor, at::Tensor> fused_lstm_cell(const at::Tensor& input_gates,
                                                               const at::Tensor& hidden_gates, const at::Tensor& cx,
                                                               const std::optional<at::Tensor>& input_bias,
                                                               const std::optional<at::Tensor>& hidden_bias) {
  count_fallback("aten::_thnn_fused_lstm_cell");
  const EmulationScope emulating;
  at::Tensor gates = on_host(input_gates) + on_host(hidden_gates);
  if (input_bias && input_bias->defined()) gates = gates + on_host(*input_bias);
  if (hidden_bias && hidden_bias->defined()) gates = gates + on_host(*hidden_bias);
  const auto chunks = gates.chunk(4, 1);
  const at::Tensor i = chunks[0].sigmoid(), f = chunks[1].sigmoid(), g = chunks[2].tanh(), o = chunks[3].sigmoid();
  const at::Tensor cy = f * on_host(cx) + i * g;
  const at::Tensor hy = o * cy.tanh();
  return {back_on(hy, cx), back_on(cy, cx), back_on(at::cat({i, f, g, o}, 1), cx)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> fused_lstm_cell_backward(const std::optional<at::Tensor>& grad_hy,
                                                                        const std::optional<at::Tensor>& grad_cy,
                                                                        const at::Tensor& cx, const at::Tensor& cy,
                                                                        const at::Tensor& workspace, bool has_bias) {
  count_fallback("aten::_thnn_fused_lstm_cell_backward_impl");
  const EmulationScope emulating;
  const auto gates = on_host(workspace).chunk(4, 1);
  const at::Tensor &i = gates[0], &f = gates[1], &g = gates[2], &o = gates[3];
  const at::Tensor tanh_cy = on_host(cy).tanh();
  const at::Tensor gh = grad_hy && grad_hy->defined() ? on_host(*grad_hy) : at::zeros_like(tanh_cy);
  at::Tensor gc = grad_cy && grad_cy->defined() ? on_host(*grad_cy) : at::zeros_like(tanh_cy);
  gc = gc + gh * o * (1 - tanh_cy * tanh_cy);  // through hy = o tanh(cy)
  const at::Tensor grad_gates = at::cat({gc * g * i * (1 - i), gc * on_host(cx) * f * (1 - f), gc * i * (1 - g * g),
                                         gh * tanh_cy * o * (1 - o)},
                                        1);
  const at::Tensor grad_bias = has_bias ? grad_gates.sum(0) : at::Tensor();
  return {back_on(grad_gates, cx), back_on(gc * f, cx), back_on(grad_bias, cx)};
}

}  // namespace

void register_host_kernels() {
  static torch::Library host(torch::Library::IMPL, "aten", c10::DispatchKey::PrivateUse1, __FILE__, __LINE__);
  host.impl("convolution_overrideable", TORCH_FN(convolution));
  host.impl("convolution_backward_overrideable", TORCH_FN(convolution_backward));
  host.impl("native_batch_norm", TORCH_FN(batch_norm));
  host.impl("_thnn_fused_lstm_cell", TORCH_FN(fused_lstm_cell));
  host.impl("_thnn_fused_lstm_cell_backward_impl", TORCH_FN(fused_lstm_cell_backward));
}

}  // namespace emulated
