// The transformers' fused CPU operators (plugins/models/fused_ops.h) against the unfused ATen ops
// they replace: values and every gradient, with every kernel build this CPU runs (AVX-512, AVX2,
// the portable one), on row widths that are and are not a multiple of the vector width; and a
// whole pre-norm block fused against the same block unfused.
//
// Tolerances, from the arithmetic each fusion changes (fp32, unit roundoff u = 6e-8):
//   bias_gelu       ATen's own formulas, so the values agree to the rounding of erf/exp/tanh
//                   between vector widths (a few u, relative); the bias's gradient is a column sum
//                   of R rows in another order: |error| <= R u sum|g|, here < 1e-5 for R <= 64.
//   add_layer_norm  a two-pass mean and variance against ATen's Welford: the normalised values
//                   differ by a few u times |x - mean| / std (<= sqrt(C) ~ 23 for C = 512): 1e-5.
//   packed_attention the same ATen kernel on the same strided views: bitwise, checked exactly.
#include <ATen/ops/scaled_dot_product_attention.h>
#include <torch/torch.h>

#include <gtest/gtest.h>

#include "fused_kernels.h"
#include "fused_ops.h"
#include "transformer.h"

namespace plugtrain::models {
namespace {

using fused::GeluForm;

void expect_close(const torch::Tensor& got, const torch::Tensor& want, double tolerance, const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  const double scale = std::max(1.0, want.abs().max().item<double>());
  EXPECT_LE((got - want).abs().max().item<double>(), tolerance * scale) << what;
}

// The kernel builds this CPU can run, by name.
std::vector<std::pair<std::string, const fused::KernelTable*>> runnable_kernels() {
  std::vector<std::pair<std::string, const fused::KernelTable*>> all{{"default", &fused::default_kernels()}};
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) all.emplace_back("avx2", &fused::avx2_kernels());
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl"))
    all.emplace_back("avx512", &fused::avx512_kernels());
#endif
  return all;
}

struct Shape {
  std::int64_t rows, cols;
};
const Shape kShapes[] = {{64, 512}, {13, 37}, {1, 5}};

TEST(FusedKernels, EveryBuildGivesGeluOfTheBiasedInputItsSlopeAndTheBiasGradient) {
  torch::manual_seed(1);
  for (const auto& [name, kernels] : runnable_kernels())
    for (const Shape s : kShapes)
      for (const GeluForm form : {GeluForm::exact, GeluForm::tanh}) {
        const std::string what = name + " " + std::to_string(s.rows) + "x" + std::to_string(s.cols) +
                                 (form == GeluForm::exact ? " exact" : " tanh");
        const torch::Tensor h = torch::randn({s.rows, s.cols}) * 3, bias = torch::randn({s.cols});
        const torch::Tensor g = torch::randn({s.rows, s.cols});
        torch::Tensor y = torch::empty_like(h), slope = torch::empty_like(h), grad_h = torch::empty_like(h);
        torch::Tensor grad_bias = torch::empty({s.cols});
        kernels->bias_gelu_forward(h.data_ptr<float>(), bias.data_ptr<float>(), y.data_ptr<float>(),
                                   slope.data_ptr<float>(), s.rows, s.cols, form);
        kernels->bias_gelu_backward(g.data_ptr<float>(), slope.data_ptr<float>(), grad_h.data_ptr<float>(),
                                    grad_bias.data_ptr<float>(), s.rows, s.cols);
        const std::string approximate = form == GeluForm::exact ? "none" : "tanh";
        const torch::Tensor u = h + bias;
        const torch::Tensor want_grad = at::gelu_backward(g, u, approximate);
        expect_close(y, at::gelu(u, approximate), 1e-6, what + " values");
        expect_close(grad_h, want_grad, 1e-6, what + " input gradient");
        expect_close(grad_bias, want_grad.sum(0), 1e-5, what + " bias gradient");
      }
}

TEST(FusedKernels, EveryBuildAddsTheResidualAndNormalisesAsLayerNorm) {
  torch::manual_seed(2);
  for (const auto& [name, kernels] : runnable_kernels())
    for (const Shape s : kShapes) {
      const std::string what = name + " " + std::to_string(s.rows) + "x" + std::to_string(s.cols);
      const torch::Tensor x = torch::randn({s.rows, s.cols}) + 2, a = torch::randn({s.rows, s.cols});
      const torch::Tensor w = torch::randn({s.cols}), b = torch::randn({s.cols});
      torch::Tensor sum = torch::empty_like(x), out = torch::empty_like(x);
      torch::Tensor mean = torch::empty({s.rows}), rstd = torch::empty({s.rows});
      kernels->add_layer_norm_forward(x.data_ptr<float>(), a.data_ptr<float>(), w.data_ptr<float>(),
                                      b.data_ptr<float>(), sum.data_ptr<float>(), out.data_ptr<float>(),
                                      mean.data_ptr<float>(), rstd.data_ptr<float>(), s.rows, s.cols, 1e-5f);
      auto [want, want_mean, want_rstd] = at::native_layer_norm(x + a, {s.cols}, w, b, 1e-5);
      EXPECT_TRUE(sum.equal(x + a)) << what;
      expect_close(out, want, 1e-5, what + " normalised");
      expect_close(mean, want_mean.view({s.rows}), 1e-6, what + " mean");
      expect_close(rstd, want_rstd.view({s.rows}), 1e-5, what + " rstd");
    }
}

// The gradients of `loss` with respect to `inputs`.
std::vector<torch::Tensor> gradients(const torch::Tensor& loss, const std::vector<torch::Tensor>& inputs) {
  return torch::autograd::grad({loss}, inputs, {}, /*retain_graph=*/false, /*create_graph=*/false,
                               /*allow_unused=*/true);
}

TEST(FusedOps, BiasGeluBackpropagatesAsMatmulBiasAndGelu) {
  torch::manual_seed(3);
  for (const bool with_bias : {true, false}) {
    const torch::Tensor h = torch::randn({4, 16, 96}, torch::requires_grad());
    const torch::Tensor bias = with_bias ? torch::randn({96}, torch::requires_grad()) : torch::Tensor();
    const torch::Tensor r = torch::randn({4, 16, 96});
    const auto fused_grads = gradients((fused::bias_gelu(h, bias, GeluForm::exact) * r).sum(),
                                       with_bias ? std::vector{h, bias} : std::vector{h});
    const auto plain_grads =
        gradients((torch::gelu(with_bias ? h + bias : h) * r).sum(), with_bias ? std::vector{h, bias} : std::vector{h});
    for (std::size_t i = 0; i < plain_grads.size(); ++i)
      expect_close(fused_grads[i], plain_grads[i], 1e-5, "gradient " + std::to_string(i));
  }
  EXPECT_THROW(fused::bias_gelu(torch::randn({2, 8}), torch::randn({7}), GeluForm::exact), std::invalid_argument);
}

TEST(FusedOps, AddLayerNormBackpropagatesThroughBothOutputs) {
  torch::manual_seed(4);
  const auto leaf = [](std::vector<std::int64_t> shape) { return torch::randn(shape, torch::requires_grad()); };
  for (const bool with_bias : {true, false}) {
    const torch::Tensor x = leaf({3, 10, 40}), a = leaf({3, 10, 40}), w = leaf({40});
    const torch::Tensor b = with_bias ? leaf({40}) : torch::Tensor();
    const std::vector<torch::Tensor> inputs = with_bias ? std::vector{x, a, w, b} : std::vector{x, a, w};
    const torch::Tensor r1 = torch::randn({3, 10, 40}), r2 = torch::randn({3, 10, 40});
    auto [sum, out] = fused::add_layer_norm(x, a, w, b, 1e-5);
    const auto fused_grads = gradients((sum * r1).sum() + (out * r2).sum(), inputs);
    const torch::Tensor plain_sum = x + a;
    const auto plain_grads =
        gradients((plain_sum * r1).sum() + (at::layer_norm(plain_sum, {40}, w, b, 1e-5) * r2).sum(), inputs);
    for (std::size_t i = 0; i < plain_grads.size(); ++i)
      expect_close(fused_grads[i], plain_grads[i], 1e-5,
                   "gradient " + std::to_string(i) + " bias " + std::to_string(with_bias));
  }
  EXPECT_THROW(fused::add_layer_norm(torch::randn({2, 8}), torch::randn({8}), torch::ones({8}), {}, 1e-5),
               std::invalid_argument);
}

TEST(FusedOps, PackedAttentionIsScaledDotProductAttentionOverTheSplitHeads) {
  torch::manual_seed(5);
  const std::int64_t b = 3, t = 20, heads = 4, c = 64;
  for (const bool causal : {true, false}) {
    const torch::Tensor qkv = torch::randn({b, t, 3 * c}, torch::requires_grad()), r = torch::randn({b, t, c});
    const torch::Tensor ours = fused::packed_attention(qkv, heads, causal);
    const auto parts = qkv.view({b, t, 3, heads, c / heads}).permute({2, 0, 3, 1, 4}).unbind(0);
    const torch::Tensor want = at::scaled_dot_product_attention(parts[0], parts[1], parts[2], {}, 0.0, causal)
                                   .transpose(1, 2)
                                   .reshape({b, t, c});
    EXPECT_TRUE(ours.equal(want)) << "causal " << causal;
    EXPECT_TRUE(gradients((ours * r).sum(), {qkv})[0].equal(gradients((want * r).sum(), {qkv})[0]))
        << "causal " << causal;
  }
  EXPECT_THROW(fused::packed_attention(torch::randn({2, 5, 10}), 4, true), std::invalid_argument);
}

// A GPT block fused and the same block unfused (the same weights), with and without nanoGPT's
// biases: the output and every parameter's gradient within the tolerances above, compounded
// through one block (1e-5).
TEST(FusedOps, AFusedBlockComputesWhatTheUnfusedBlockComputes) {
  torch::manual_seed(6);
  for (const bool bias : {true, false}) {
    TransformerShape shape;
    shape.width = 64;
    shape.heads = 4;
    shape.causal = true;
    shape.bias = bias;
    shape.fused = true;
    TransformerBlock fast(shape);
    shape.fused = false;
    TransformerBlock plain(shape);
    {
      torch::NoGradGuard no_grad;
      for (auto& p : fast->named_parameters()) {
        p.value().normal_(0.0, 0.2);
        plain->named_parameters()[p.key()].copy_(p.value());
      }
    }
    const torch::Tensor x = torch::randn({2, 24, 64}), r = torch::randn({2, 24, 64});
    const torch::Tensor y_fast = fast->forward(x), y_plain = plain->forward(x);
    expect_close(y_fast, y_plain, 1e-5, "block output, bias " + std::to_string(bias));
    (y_fast * r).sum().backward();
    (y_plain * r).sum().backward();
    for (const auto& p : plain->named_parameters())
      expect_close(fast->named_parameters()[p.key()].grad(), p.value().grad(), 1e-5, p.key() + " gradient");
  }
}

}  // namespace
}  // namespace plugtrain::models
