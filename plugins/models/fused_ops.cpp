// The autograd functions of fused_ops.h over the kernels of fused_kernels.h.
#include "fused_ops.h"

#include <ATen/Version.h>
#include <ATen/autocast_mode.h>
#include <ATen/ops/_scaled_dot_product_flash_attention_for_cpu.h>
#include <ATen/ops/_scaled_dot_product_flash_attention_for_cpu_backward.h>
#include <ATen/ops/native_layer_norm_backward.h>
#include <torch/autograd.h>

#include <stdexcept>
#include <string>

namespace plugtrain::models::fused {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The build for the instruction set ATen itself runs on, so fused and unfused agree in width.
const KernelTable& kernels() {
  static const KernelTable& table = []() -> const KernelTable& {
#if defined(PLUGTRAIN_FUSED_X86)
    const std::string capability = at::get_cpu_capability();
    if (capability == "AVX512") return avx512_kernels();
    if (capability == "AVX2") return avx2_kernels();
#endif
    return default_kernels();
  }();
  return table;
}

// An autograd function's inputs must be defined tensors: a missing bias travels as an empty one.
torch::Tensor bias_or_empty(const torch::Tensor& bias, const torch::Tensor& like) {
  return bias.defined() ? bias : at::empty({0}, like.options());
}
const float* data_or_null(const torch::Tensor& t) { return t.numel() > 0 ? t.data_ptr<float>() : nullptr; }

struct BiasGeluFunction : torch::autograd::Function<BiasGeluFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& h, const torch::Tensor& bias,
                               std::int64_t form) {
    const torch::Tensor input = h.contiguous();
    const torch::Tensor b = bias.contiguous();
    const std::int64_t cols = input.size(-1);
    torch::Tensor y = at::empty_like(input), slope = at::empty_like(input);
    kernels().bias_gelu_forward(input.data_ptr<float>(), data_or_null(b), y.data_ptr<float>(), slope.data_ptr<float>(),
                                input.numel() / cols, cols, GeluForm(form));
    ctx->save_for_backward({slope});
    ctx->saved_data["bias"] = bias.numel() > 0;
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const torch::Tensor slope = ctx->get_saved_variables()[0];
    const torch::Tensor grad_y = grads[0].contiguous();
    const std::int64_t cols = slope.size(-1);
    torch::Tensor grad_h = at::empty_like(slope);
    torch::Tensor grad_bias = ctx->saved_data["bias"].toBool() ? at::empty({cols}, slope.options()) : torch::Tensor();
    kernels().bias_gelu_backward(grad_y.data_ptr<float>(), slope.data_ptr<float>(), grad_h.data_ptr<float>(),
                                 grad_bias.defined() ? grad_bias.data_ptr<float>() : nullptr, slope.numel() / cols,
                                 cols);
    return {grad_h, grad_bias, torch::Tensor()};
  }
};

struct AddLayerNormFunction : torch::autograd::Function<AddLayerNormFunction> {
  static variable_list forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& a,
                               const torch::Tensor& weight, const torch::Tensor& bias, double eps) {
    const torch::Tensor xc = x.contiguous(), ac = a.contiguous(), w = weight.contiguous();
    const torch::Tensor b = bias.contiguous();
    const std::int64_t cols = xc.size(-1), rows = xc.numel() / cols;
    std::vector<std::int64_t> stats_shape = xc.sizes().vec();
    stats_shape.back() = 1;
    torch::Tensor sum = at::empty_like(xc), out = at::empty_like(xc);
    torch::Tensor mean = at::empty(stats_shape, xc.options()), rstd = at::empty(stats_shape, xc.options());
    kernels().add_layer_norm_forward(xc.data_ptr<float>(), ac.data_ptr<float>(), w.data_ptr<float>(), data_or_null(b),
                                     sum.data_ptr<float>(), out.data_ptr<float>(), mean.data_ptr<float>(),
                                     rstd.data_ptr<float>(), rows, cols, float(eps));
    ctx->save_for_backward({sum, mean, rstd, weight, bias});
    return {sum, out};
  }

  // The LayerNorm's backward is ATen's (it takes the mean and rstd saved above); the residual's
  // gradient is added to it, and the sum's gradient goes to x and a alike.
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor &sum = saved[0], &weight = saved[3];
    const torch::Tensor bias = saved[4].numel() > 0 ? saved[4] : torch::Tensor();
    torch::Tensor grad_sum = grads[0], grad_weight, grad_bias;
    if (grads[1].defined()) {
      auto [grad_input, gw, gb] = at::native_layer_norm_backward(grads[1].contiguous(), sum, {sum.size(-1)}, saved[1],
                                                                 saved[2], weight, bias, {true, true, bias.defined()});
      grad_sum = grad_sum.defined() ? grad_input.add_(grad_sum) : grad_input;
      grad_weight = gw;
      grad_bias = gb;
    }
    return {grad_sum, grad_sum, grad_weight, grad_bias, torch::Tensor()};
  }
};

// q, k or v (B, H, T, D) as a strided view of qkv (B, T, 3C).
torch::Tensor head_view(const torch::Tensor& qkv, std::int64_t which, std::int64_t heads) {
  const std::int64_t b = qkv.size(0), t = qkv.size(1), c = qkv.size(2) / 3;
  return qkv.view({b, t, 3, heads, c / heads}).select(2, which).transpose(1, 2);
}

struct PackedAttentionFunction : torch::autograd::Function<PackedAttentionFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& qkv_in, std::int64_t heads, bool causal) {
    const torch::Tensor qkv = qkv_in.contiguous();
    auto [out, logsumexp] = at::_scaled_dot_product_flash_attention_for_cpu(
        head_view(qkv, 0, heads), head_view(qkv, 1, heads), head_view(qkv, 2, heads), 0.0, causal);
    ctx->save_for_backward({qkv, out, logsumexp});
    ctx->saved_data["heads"] = heads;
    ctx->saved_data["causal"] = causal;
    // ATen's CPU kernel lays its output out as (B, T, H, D): this reshape is a view, no copy.
    return out.transpose(1, 2).reshape({qkv.size(0), qkv.size(1), qkv.size(2) / 3});
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor &qkv = saved[0], &out = saved[1];
    const std::int64_t heads = ctx->saved_data["heads"].toInt();
    const std::int64_t b = qkv.size(0), t = qkv.size(1), c = qkv.size(2) / 3;
    const torch::Tensor grad_out = grads[0].reshape({b, t, heads, c / heads}).transpose(1, 2);
    auto [gq, gk, gv] = at::_scaled_dot_product_flash_attention_for_cpu_backward(
        grad_out, head_view(qkv, 0, heads), head_view(qkv, 1, heads), head_view(qkv, 2, heads), out, saved[2], 0.0,
        ctx->saved_data["causal"].toBool());
    // One copy of the three into the packed layout (B, T, 3, H, D) = (B, T, 3C).
    return {at::stack({gq.transpose(1, 2), gk.transpose(1, 2), gv.transpose(1, 2)}, 2).view({b, t, 3 * c}),
            torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

// Under CPU autocast a float32 input still meets bf16 linear outputs inside the block: not ours.
bool applies(const torch::Tensor& x) {
  return x.device().is_cpu() && x.scalar_type() == torch::kFloat && !at::autocast::is_autocast_enabled(at::kCPU);
}

torch::Tensor bias_gelu(const torch::Tensor& h, const torch::Tensor& bias, GeluForm form) {
  if (bias.defined() && (bias.dim() != 1 || bias.size(0) != h.size(-1)))
    throw std::invalid_argument("bias_gelu: the bias has " + std::to_string(bias.numel()) + " values for rows of " +
                                std::to_string(h.size(-1)));
  return BiasGeluFunction::apply(h, bias_or_empty(bias, h), std::int64_t(form));
}

std::pair<torch::Tensor, torch::Tensor> add_layer_norm(const torch::Tensor& x, const torch::Tensor& a,
                                                       const torch::Tensor& weight, const torch::Tensor& bias,
                                                       double eps) {
  if (x.sizes() != a.sizes())
    throw std::invalid_argument("add_layer_norm: the residual and the branch differ in shape");
  const variable_list both = AddLayerNormFunction::apply(x, a, weight, bias_or_empty(bias, x), eps);
  return {both[0], both[1]};
}

torch::Tensor packed_attention(const torch::Tensor& qkv, std::int64_t heads, bool causal) {
  if (qkv.dim() != 3 || qkv.size(2) % (3 * heads) != 0)
    throw std::invalid_argument("packed_attention: qkv is not (B, T, 3 x heads x head width)");
  return PackedAttentionFunction::apply(qkv, heads, causal);
}

}  // namespace plugtrain::models::fused
