#include "train/batch_mixer.h"

#include <algorithm>
#include <cmath>
#include <random>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

namespace plugtrain {

namespace {

// Beta(a, a) from two gammas (std has no beta distribution).
double beta_sample(std::mt19937_64& rng, double a) {
  std::gamma_distribution<double> gamma(a, 1.0);
  const double x = gamma(rng), y = gamma(rng);
  return x + y > 0 ? x / (x + y) : 0.5;
}

// A seed per (run seed, epoch, batch): SplitMix64 over the three, so no two batches share draws.
std::uint64_t batch_seed(std::uint64_t seed, std::int64_t epoch, std::int64_t index) {
  std::uint64_t z = seed ^ (std::uint64_t(epoch) * 0x9E3779B97F4A7C15ull) ^ (std::uint64_t(index) * 0xBF58476D1CE4E5B9ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

struct Box {
  std::int64_t y0, y1, x0, x1;
};

// timm's rand_bbox: a box of side ratio sqrt(1 - lam) centred uniformly, clipped to the image.
Box random_box(std::mt19937_64& rng, std::int64_t h, std::int64_t w, double lam) {
  const double ratio = std::sqrt(1 - lam);
  const std::int64_t cut_h = std::int64_t(double(h) * ratio), cut_w = std::int64_t(double(w) * ratio);
  const std::int64_t cy = std::uniform_int_distribution<std::int64_t>(0, h - 1)(rng);
  const std::int64_t cx = std::uniform_int_distribution<std::int64_t>(0, w - 1)(rng);
  return {std::clamp<std::int64_t>(cy - cut_h / 2, 0, h), std::clamp<std::int64_t>(cy + cut_h / 2, 0, h),
          std::clamp<std::int64_t>(cx - cut_w / 2, 0, w), std::clamp<std::int64_t>(cx + cut_w / 2, 0, w)};
}

}  // namespace

MixedBatch BatchMixer::mix(const data::Batch& batch, std::int64_t epoch, std::int64_t index) const {
  MixedBatch out{batch, batch.targets, 1.0, false};
  const MixSettings& s = settings_;
  std::mt19937_64 rng(batch_seed(s.seed, epoch, index));
  if (!s.enabled() || std::uniform_real_distribution<double>(0, 1)(rng) >= s.prob) return out;
  const bool both = s.mixup_alpha > 0 && s.cutmix_alpha > 0;
  out.cutmix = both ? std::uniform_real_distribution<double>(0, 1)(rng) < s.switch_prob : s.mixup_alpha <= 0;
  double lam = beta_sample(rng, out.cutmix ? s.cutmix_alpha : s.mixup_alpha);

  at::NoGradGuard no_grad;
  const at::Tensor& x = batch.inputs;
  const at::Tensor partner = x.flip(0);
  if (out.cutmix) {
    const std::int64_t h = x.size(-2), w = x.size(-1);
    const Box b = random_box(rng, h, w, lam);
    at::Tensor mixed = x.clone();
    mixed.slice(-2, b.y0, b.y1).slice(-1, b.x0, b.x1).copy_(partner.slice(-2, b.y0, b.y1).slice(-1, b.x0, b.x1));
    out.batch.inputs = mixed;
    lam = 1.0 - double((b.y1 - b.y0) * (b.x1 - b.x0)) / double(h * w);  // timm's correct_lam
  } else {
    out.batch.inputs = x * lam + partner * (1.0 - lam);
  }
  const at::Tensor onehot = at::one_hot(batch.targets, s.classes).to(at::kFloat);
  out.batch.targets = onehot * lam + onehot.flip(0) * (1.0 - lam);
  out.hard_targets = lam >= 0.5 ? batch.targets : batch.targets.flip(0);
  out.lam = lam;
  return out;
}

}  // namespace plugtrain
