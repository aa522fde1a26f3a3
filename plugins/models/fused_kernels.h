// The CPU kernels behind fused_ops.h: plain float loops over rows, built once per instruction set
// (fused_kernels_{avx512,avx2,default}.cpp, each compiling fused_kernels_impl.h with its own
// CPU_CAPABILITY) and picked at run time as ATen picks its own (at::get_cpu_capability()), so
// both sides of a fused/unfused comparison use the same vector width.
#pragma once

#include <cstdint>

namespace plugtrain::models::fused {

enum class GeluForm { exact, tanh };

struct KernelTable {
  // y = gelu(h + bias), slope = gelu'(h + bias), for rows x cols row-major; bias may be null.
  void (*bias_gelu_forward)(const float* h, const float* bias, float* y, float* slope, std::int64_t rows,
                            std::int64_t cols, GeluForm form);
  // grad_h = grad_y * slope; grad_bias (when not null) = the column sums of grad_h.
  void (*bias_gelu_backward)(const float* grad_y, const float* slope, float* grad_h, float* grad_bias,
                             std::int64_t rows, std::int64_t cols);
  // sum = x + a, out = layer_norm(sum) with weight and bias (bias may be null), and each row's
  // mean and 1 / sqrt(variance + eps) (ATen's native_layer_norm saves the same two).
  void (*add_layer_norm_forward)(const float* x, const float* a, const float* weight, const float* bias, float* sum,
                                 float* out, float* mean, float* rstd, std::int64_t rows, std::int64_t cols, float eps);
};

const KernelTable& avx512_kernels();
const KernelTable& avx2_kernels();
const KernelTable& default_kernels();

}  // namespace plugtrain::models::fused
