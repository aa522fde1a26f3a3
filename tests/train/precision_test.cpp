// Dynamic loss scaling: an overflowing step is skipped and the scale halved; good steps keep it.
// ctest-label: unit
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "train/precision.h"

namespace plugtrain {
namespace precision_test {

TEST(LossScaler, OverflowSkipsTheStepAndHalvesTheScale) {
  LossScaler scaler(true, c10::Device("cpu"), 1024.0, 2000);
  at::Tensor p = at::ones({3}).requires_grad_();
  (scaler.scale(p.sum()) * std::numeric_limits<float>::infinity()).backward();
  EXPECT_FALSE(scaler.unscale({p}));
  scaler.update();
  EXPECT_DOUBLE_EQ(scaler.current_scale(), 512.0);
  EXPECT_EQ(scaler.skipped_steps(), 1);
}

TEST(LossScaler, FiniteGradientsAreUnscaled) {
  LossScaler scaler(true, c10::Device("cpu"), 1024.0, 2000);
  at::Tensor p = at::ones({3}).requires_grad_();
  scaler.scale((p * 2).sum()).backward();
  EXPECT_TRUE(scaler.unscale({p}));
  EXPECT_TRUE(at::allclose(p.grad(), at::full({3}, 2.0)));
  scaler.update();
  EXPECT_DOUBLE_EQ(scaler.current_scale(), 1024.0);
}

TEST(LossScaler, DisabledIsANoOp) {
  LossScaler scaler(false, c10::Device("cpu"));
  at::Tensor loss = at::ones({});
  EXPECT_TRUE(scaler.scale(loss).equal(loss));
  EXPECT_TRUE(scaler.unscale({}));
  EXPECT_DOUBLE_EQ(scaler.current_scale(), 1.0);
}

TEST(Autocast, Bf16ScopeCastsMatmulsAndRestoresOnExit) {
  at::Tensor a = at::randn({4, 4}), b = at::randn({4, 4});
  {
    AutocastScope scope(PrecisionMode::bf16, c10::DeviceType::CPU);
    EXPECT_EQ(at::mm(a, b).scalar_type(), at::kBFloat16);
  }
  EXPECT_EQ(at::mm(a, b).scalar_type(), at::kFloat);
  AutocastScope off(PrecisionMode::fp32, c10::DeviceType::CPU);
  EXPECT_EQ(at::mm(a, b).scalar_type(), at::kFloat);
}

}  // namespace precision_test
}  // namespace plugtrain
