// The bodies of fused_kernels.h's kernels, compiled once per instruction set: the including file
// defines PLUGTRAIN_FUSED_KERNEL_TABLE (the function that hands out its table) and the build sets
// CPU_CAPABILITY, which puts at::vec's Vectorized<float> (and these helpers) in a namespace of
// its own, so the three builds never meet in one definition.
//
// The GELU formulas are ATen's (aten/src/ATen/native/cpu/Activation.cpp: its vector erf, its
// derivative), with one exp shared between the erf and the density (gelu_and_slope).
#include <ATen/Parallel.h>
#include <ATen/cpu/vec/vec.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "fused_kernels.h"

namespace plugtrain::models::fused {
namespace CPU_CAPABILITY {

using Vec = at::vec::Vectorized<float>;
constexpr std::int64_t kLanes = Vec::size();

// Rows per task: about 16k floats each, so small tensors stay on one thread.
std::int64_t row_grain(std::int64_t cols) { return std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(cols, 1)); }

struct GeluConstants {
  Vec half{0.5f}, one{1.0f}, minus_half{-0.5f}, minus_zero{-0.0f};
  Vec alpha{float(M_SQRT1_2)};                       // exact: 1 / sqrt(2)
  Vec beta{float(M_2_SQRTPI * M_SQRT1_2 * 0.5)};     // exact: 1 / sqrt(2 pi)
  Vec tanh_beta{float(M_SQRT2 * M_2_SQRTPI * 0.5)};  // tanh: sqrt(2 / pi)
  Vec kappa{0.044715f}, three_kappa{3.0f * 0.044715f};
  // Abramowitz and Stegun 7.1.26, the erf of ATen's vector code (|error| <= 1.5e-7).
  Vec p{0.3275911f}, p1{0.254829592f}, p2{-0.284496736f}, p3{1.421413741f}, p4{-1.453152027f}, p5{1.061405429f};
};

// erf(z) by ATen's formula, given e = exp(-z * z).
inline Vec erf_given_exp(const GeluConstants& k, Vec z, Vec e) {
  const Vec t = k.one / (k.p * z.abs() + k.one);
  const Vec r = (((k.p5 * t + k.p4) * t + k.p3) * t + k.p2) * t + k.p1;
  return (k.one - r * t * e) ^ (z & k.minus_zero);  // the sign of z
}

// One vector of u = h + b: y = gelu(u) and slope = gelu'(u). The exact form needs exp(-u^2 / 2)
// twice, inside erf(u / sqrt(2)) and as the density: it is computed once, by ATen's fast
// polynomial (exp_u20, relative error ~1e-6, which moves erf by under 3e-7).
inline void gelu_and_slope(const GeluConstants& k, Vec u, GeluForm form, Vec& y, Vec& slope) {
  if (form == GeluForm::exact) {
    const Vec e = (u * u * k.minus_half).exp_u20();
    const Vec cdf = k.half * (k.one + erf_given_exp(k, u * k.alpha, e));
    y = u * cdf;
    slope = cdf + u * (k.beta * e);
  } else {
    const Vec u2 = u * u;
    const Vec t = (k.tanh_beta * (u + k.kappa * u2 * u)).tanh();
    const Vec right = k.one + t;
    const Vec left = k.half * u;
    y = left * right;
    slope = k.half * right + left * (k.one - t * t) * k.tanh_beta * (k.one + k.three_kappa * u2);
  }
}

void bias_gelu_forward(const float* h, const float* bias, float* y, float* slope, std::int64_t rows, std::int64_t cols,
                       GeluForm form) {
  at::parallel_for(0, rows, row_grain(cols), [&](std::int64_t begin, std::int64_t end) {
    const GeluConstants k;
    for (std::int64_t r = begin; r < end; ++r) {
      const std::int64_t at = r * cols;
      for (std::int64_t j = 0; j < cols; j += kLanes) {
        const int n = int(std::min<std::int64_t>(kLanes, cols - j));
        Vec u = Vec::loadu(h + at + j, n);
        if (bias != nullptr) u = u + Vec::loadu(bias + j, n);
        Vec out, d;
        gelu_and_slope(k, u, form, out, d);
        out.store(y + at + j, n);
        d.store(slope + at + j, n);
      }
    }
  });
}

// grad_h = grad_y * slope, and grad_bias its column sums: each task sums its rows into a partial
// row, and the partials are added in task order (the same order for the same thread count).
void bias_gelu_backward(const float* grad_y, const float* slope, float* grad_h, float* grad_bias, std::int64_t rows,
                        std::int64_t cols) {
  const std::int64_t tasks = std::max<std::int64_t>(1, std::min<std::int64_t>(at::get_num_threads(), rows));
  const std::int64_t per_task = (rows + tasks - 1) / tasks;
  std::vector<float> partial(std::size_t(grad_bias != nullptr ? tasks * cols : 0), 0.0f);
  at::parallel_for(0, tasks, 1, [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t task = first; task < last; ++task) {
      float* sums = grad_bias != nullptr ? partial.data() + task * cols : nullptr;
      for (std::int64_t r = task * per_task; r < std::min(rows, (task + 1) * per_task); ++r) {
        const std::int64_t at = r * cols;
        for (std::int64_t j = 0; j < cols; j += kLanes) {
          const int n = int(std::min<std::int64_t>(kLanes, cols - j));
          const Vec g = Vec::loadu(grad_y + at + j, n) * Vec::loadu(slope + at + j, n);
          g.store(grad_h + at + j, n);
          if (sums != nullptr) (Vec::loadu(sums + j, n) + g).store(sums + j, n);
        }
      }
    }
  });
  if (grad_bias == nullptr) return;
  std::fill(grad_bias, grad_bias + cols, 0.0f);
  for (std::int64_t task = 0; task < tasks; ++task)
    for (std::int64_t j = 0; j < cols; ++j) grad_bias[j] += partial[std::size_t(task * cols + j)];
}

float sum_lanes(Vec v) {
  alignas(64) float lanes[kLanes];
  v.store(lanes);
  float total = 0.0f;
  for (std::int64_t i = 0; i < kLanes; ++i) total += lanes[i];
  return total;
}

// One row: sum = x + a with its mean, then the variance about that mean from the row (still in
// L1), then the normalised row; ATen's form y = (s * rstd - mean * rstd) * weight + bias.
void add_layer_norm_row(const float* x, const float* a, const float* weight, const float* bias, float* sum, float* out,
                        float& mean_out, float& rstd_out, std::int64_t cols, float eps) {
  const std::int64_t full = cols - cols % kLanes;
  Vec acc(0.0f);
  float tail = 0.0f;
  for (std::int64_t j = 0; j < full; j += kLanes) {
    const Vec s = Vec::loadu(x + j) + Vec::loadu(a + j);
    s.store(sum + j);
    acc = acc + s;
  }
  for (std::int64_t j = full; j < cols; ++j) tail += (sum[j] = x[j] + a[j]);
  const float mean = (sum_lanes(acc) + tail) / float(cols);
  const Vec mean_vec(mean);
  Vec squares(0.0f);
  float tail_squares = 0.0f;
  for (std::int64_t j = 0; j < full; j += kLanes) {
    const Vec d = Vec::loadu(sum + j) - mean_vec;
    squares = squares + d * d;
  }
  for (std::int64_t j = full; j < cols; ++j) tail_squares += (sum[j] - mean) * (sum[j] - mean);
  const float rstd = 1.0f / std::sqrt((sum_lanes(squares) + tail_squares) / float(cols) + eps);
  const Vec scale(rstd), shift(-rstd * mean);
  for (std::int64_t j = 0; j < cols; j += kLanes) {
    const int n = int(std::min<std::int64_t>(kLanes, cols - j));
    Vec y = (Vec::loadu(sum + j, n) * scale + shift) * Vec::loadu(weight + j, n);
    if (bias != nullptr) y = y + Vec::loadu(bias + j, n);
    y.store(out + j, n);
  }
  mean_out = mean;
  rstd_out = rstd;
}

void add_layer_norm_forward(const float* x, const float* a, const float* weight, const float* bias, float* sum,
                            float* out, float* mean, float* rstd, std::int64_t rows, std::int64_t cols, float eps) {
  at::parallel_for(0, rows, row_grain(cols), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r)
      add_layer_norm_row(x + r * cols, a + r * cols, weight, bias, sum + r * cols, out + r * cols, mean[r], rstd[r],
                         cols, eps);
  });
}

}  // namespace CPU_CAPABILITY

const KernelTable& PLUGTRAIN_FUSED_KERNEL_TABLE() {
  static const KernelTable table{CPU_CAPABILITY::bias_gelu_forward, CPU_CAPABILITY::bias_gelu_backward,
                                 CPU_CAPABILITY::add_layer_norm_forward};
  return table;
}

}  // namespace plugtrain::models::fused
