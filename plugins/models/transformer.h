// The parts the zoo's transformers share (gpt.cpp, vit.cpp): a LayerNorm with an optional bias
// (nanoGPT's), multi-head self-attention through scaled_dot_product_attention (flash attention
// on CUDA) and the pre-norm block x + attn(ln_1(x)), x + mlp(ln_2(x)).
//
// With `fused` on, in float32 on the CPU, the blocks take fused_ops.h: the c_fc bias with
// the GELU, the first residual add with ln_2, and attention straight on c_attn's packed output.
//
// Names follow nanoGPT (ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj), so a GPT's
// state_dict loads into nanoGPT's model, and the ViT's into a Python twin with the same names.
#pragma once

#include <cmath>
#include <cstdint>

#include <torch/nn/functional/dropout.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/types.h>

#include "fused_ops.h"

namespace plugtrain::models {

// Dropout with probability p while training; x itself when p is 0 (no kernel at all).
inline torch::Tensor dropped(const torch::Tensor& x, double p, bool training) {
  return p > 0 ? torch::nn::functional::dropout(x, torch::nn::functional::DropoutFuncOptions().p(p).training(training)) : x;
}

class LayerNormImpl : public torch::nn::Module {
 public:
  LayerNormImpl(std::int64_t width, bool bias) : width_(width) {
    weight = register_parameter("weight", torch::ones({width}));
    if (bias) this->bias = register_parameter("bias", torch::zeros({width}));
  }
  torch::Tensor forward(const torch::Tensor& x) { return at::layer_norm(x, {width_}, weight, bias, 1e-5); }
  torch::Tensor weight, bias;

 private:
  std::int64_t width_;
};
TORCH_MODULE(LayerNorm);

struct TransformerShape {
  std::int64_t width = 128, heads = 4;
  double mlp_ratio = 4.0;
  double dropout = 0.0;
  bool bias = true;
  bool causal = false;
  bool fused = false;  // fused_ops.h where it applies (float32 on the CPU)
};

class SelfAttentionImpl : public torch::nn::Module {
 public:
  explicit SelfAttentionImpl(const TransformerShape& s)
      : heads_(s.heads),
        dropout_(s.dropout),
        causal_(s.causal),
        fused_(s.fused),
        c_attn(
            register_module("c_attn", torch::nn::Linear(torch::nn::LinearOptions(s.width, 3 * s.width).bias(s.bias)))),
        c_proj(register_module("c_proj", torch::nn::Linear(torch::nn::LinearOptions(s.width, s.width).bias(s.bias)))) {}

  // x (B, T, C) -> (B, T, C)
  torch::Tensor forward(const torch::Tensor& x) {
    if (fused_ && fused::applies(x) && (dropout_ == 0 || !is_training()))
      return c_proj->forward(fused::packed_attention(c_attn->forward(x), heads_, causal_));
    const std::int64_t b = x.size(0), t = x.size(1), c = x.size(2);
    const auto qkv = c_attn->forward(x).view({b, t, 3, heads_, c / heads_}).permute({2, 0, 3, 1, 4}).unbind(0);
    torch::Tensor y = at::scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], /*attn_mask=*/{},
                                                       is_training() ? dropout_ : 0.0, causal_);
    y = y.transpose(1, 2).reshape({b, t, c});
    return dropped(c_proj->forward(y), dropout_, is_training());
  }

 private:
  std::int64_t heads_;
  double dropout_;
  bool causal_, fused_;

 public:
  torch::nn::Linear c_attn, c_proj;
};
TORCH_MODULE(SelfAttention);

class FeedForwardImpl : public torch::nn::Module {
 public:
  explicit FeedForwardImpl(const TransformerShape& s)
      : dropout_(s.dropout),
        fused_(s.fused),
        c_fc(register_module("c_fc", torch::nn::Linear(torch::nn::LinearOptions(s.width, hidden(s)).bias(s.bias)))),
        c_proj(
            register_module("c_proj", torch::nn::Linear(torch::nn::LinearOptions(hidden(s), s.width).bias(s.bias)))) {}

  torch::Tensor forward(const torch::Tensor& x) {
    const torch::Tensor hidden = fused_ && fused::applies(x) ? fused::bias_gelu(at::matmul(x, c_fc->weight.t()),
                                                                                c_fc->bias, fused::GeluForm::exact)
                                                             : torch::gelu(c_fc->forward(x));
    return dropped(c_proj->forward(hidden), dropout_, is_training());
  }
  static std::int64_t hidden(const TransformerShape& s) { return std::int64_t(std::llround(double(s.width) * s.mlp_ratio)); }

 private:
  double dropout_;
  bool fused_;

 public:
  torch::nn::Linear c_fc, c_proj;
};
TORCH_MODULE(FeedForward);

class TransformerBlockImpl : public torch::nn::Module {
 public:
  explicit TransformerBlockImpl(const TransformerShape& s)
      : fused_(s.fused),
        ln_1(register_module("ln_1", LayerNorm(s.width, s.bias))),
        attn(register_module("attn", SelfAttention(s))),
        ln_2(register_module("ln_2", LayerNorm(s.width, s.bias))),
        mlp(register_module("mlp", FeedForward(s))) {}

  torch::Tensor forward(torch::Tensor x) {
    if (fused_ && fused::applies(x)) {
      auto [sum, normed] = fused::add_layer_norm(x, attn->forward(ln_1->forward(x)), ln_2->weight, ln_2->bias, 1e-5);
      return sum + mlp->forward(normed);
    }
    x = x + attn->forward(ln_1->forward(x));
    return x + mlp->forward(ln_2->forward(x));
  }

 private:
  bool fused_;

 public:
  LayerNorm ln_1;
  SelfAttention attn;
  LayerNorm ln_2;
  FeedForward mlp;
};
TORCH_MODULE(TransformerBlock);

// nanoGPT's initialisation of a transformer's linear layers: weights N(0, 0.02), biases 0, and the
// residual projections (attn.c_proj, mlp.c_proj) N(0, 0.02 / sqrt(2 * layers)) (GPT-2's scaling).
inline void init_like_gpt2(torch::nn::Module& module, std::int64_t layers) {
  torch::NoGradGuard no_grad;
  for (auto& p : module.named_parameters()) {
    const std::string& name = p.key();
    const bool residual = name.size() >= 13 && name.compare(name.size() - 13, 13, "c_proj.weight") == 0;
    if (p.value().dim() >= 2)
      p.value().normal_(0.0, residual ? 0.02 / std::sqrt(2.0 * double(layers)) : 0.02);
    else if (name.size() >= 4 && name.compare(name.size() - 4, 4, "bias") == 0)
      p.value().zero_();
  }
}

}  // namespace plugtrain::models
