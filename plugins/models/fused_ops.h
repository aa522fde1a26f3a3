// Fused operators for the zoo's transformers on the CPU (transformer.h), what Inductor fuses:
//   bias_gelu        gelu(h + bias), exact or tanh, in one pass that also keeps gelu'(h + bias),
//                    so the backward is one multiply, fused with the bias's gradient (column sums);
//   add_layer_norm   the residual add and the LayerNorm after it, in one pass over each row;
//   packed_attention scaled_dot_product_attention straight on the c_attn output (B, T, 3C): q, k
//                    and v are strided views, the output is already (B, T, C), and the backward
//                    writes the three gradients into one (B, T, 3C) tensor.
// Each is an autograd function with its own backward, for float32 CPU tensors (`applies`); the
// callers take the unfused ops elsewhere. Parameters are untouched: the layout stays torch's.
#pragma once

#include <cstdint>
#include <utility>

#include <torch/types.h>

#include "fused_kernels.h"

namespace plugtrain::models::fused {

// Whether the fused kernels take x: float32 on the CPU, outside CPU autocast.
bool applies(const torch::Tensor& x);

// gelu(h + bias) over h's last dimension; bias (that dimension's size) may be undefined.
torch::Tensor bias_gelu(const torch::Tensor& h, const torch::Tensor& bias, GeluForm form);

// (x + a, layer_norm(x + a) over the last dimension); x and a of one shape, bias may be undefined.
std::pair<torch::Tensor, torch::Tensor> add_layer_norm(const torch::Tensor& x, const torch::Tensor& a,
                                                       const torch::Tensor& weight, const torch::Tensor& bias,
                                                       double eps);

// Self-attention without dropout over qkv (B, T, 3C) laid out [q | k | v], each C = heads x head
// width: (B, T, C), as scaled_dot_product_attention over the heads then merged back.
torch::Tensor packed_attention(const torch::Tensor& qkv, std::int64_t heads, bool causal);

}  // namespace plugtrain::models::fused
