// dp's replica mechanics on the CPU: split, parallel forward, gathered output, gradients summed
// into replica 0. The end-to-end run is in distributed_test.cpp.
// ctest-label: unit
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/nn/modules/linear.h>

#include "distributed/data_parallel.h"
#include "train/precision.h"

namespace plugtrain {
namespace data_parallel_test {

class TwoLayers : public TensorModel {
 public:
  explicit TwoLayers(std::int64_t hidden = 5)
      : first(register_module("first", torch::nn::Linear(4, hidden))),
        second(register_module("second", torch::nn::Linear(hidden, 3))) {}
  torch::Tensor forward(torch::Tensor x) override { return second(at::relu(first(x))); }
  torch::nn::Linear first, second;
};

// Replicas built as the factory builds them: fresh random weights, which dp must overwrite.
DataParallel replicate(std::shared_ptr<Model> model, int n) {
  std::vector<std::shared_ptr<Model>> replicas{model};
  std::vector<c10::Device> devices(n, c10::Device(c10::kCPU));
  for (int i = 1; i < n; ++i) replicas.push_back(std::make_shared<TwoLayers>());
  return DataParallel(replicas, devices);
}

// The gradients of `model` for the mean loss over the whole batch, in one piece.
std::vector<at::Tensor> single_gradients(TwoLayers& model, const at::Tensor& x, const at::Tensor& y) {
  model.zero_grad();
  at::cross_entropy_loss(model.forward(x), y).backward();
  std::vector<at::Tensor> grads;
  for (const auto& p : model.parameters()) grads.push_back(p.grad().clone());
  model.zero_grad();
  return grads;
}

void expect_dp_gradients_match(int replicas, std::int64_t batch) {
  at::manual_seed(3);
  auto model = std::make_shared<TwoLayers>();
  const at::Tensor x = at::randn({batch, 4}), y = at::randint(3, {batch});
  const std::vector<at::Tensor> expected = single_gradients(*model, x, y);
  DataParallel dp = replicate(model, replicas);
  const at::Tensor out = dp.forward(x);
  ASSERT_EQ(out.size(0), batch);
  EXPECT_TRUE(at::allclose(out, model->forward(x), 1e-5, 1e-6)) << "outputs differ from one replica's";
  at::cross_entropy_loss(out, y).backward();
  dp.gather_gradients();
  const auto params = model->parameters();
  for (std::size_t i = 0; i < params.size(); ++i)
    EXPECT_TRUE(at::allclose(params[i].grad(), expected[i], 1e-5, 1e-6))
        << replicas << " replicas, batch " << batch << ", parameter " << i << " differs by "
        << (params[i].grad() - expected[i]).abs().max().item<double>();
}

TEST(DataParallel, GradientsOfSplitBatchesAddUpToTheWholeBatchs) {
  expect_dp_gradients_match(2, 8);
  expect_dp_gradients_match(3, 10);  // parts of 4, 3 and 3
  expect_dp_gradients_match(4, 10);  // 3, 3, 2, 2
}

TEST(DataParallel, ABatchSmallerThanTheReplicasLeavesSomeIdle) { expect_dp_gradients_match(3, 2); }

TEST(DataParallel, ReplicasFollowReplica0sTrainingModeAndWeightsEachStep) {
  at::manual_seed(4);
  auto model = std::make_shared<TwoLayers>();
  DataParallel dp = replicate(model, 2);
  const at::Tensor x = at::randn({6, 4});
  {
    at::NoGradGuard no_grad;
    model->first->weight.mul_(2);  // an optimizer step on replica 0
  }
  model->eval();
  at::NoGradGuard no_grad;
  EXPECT_TRUE(at::allclose(dp.forward(x), model->forward(x), 1e-5, 1e-6));
}

TEST(DataParallel, ReplicaThreadsKeepTheCallersAutocast) {
  auto model = std::make_shared<TwoLayers>();
  DataParallel dp = replicate(model, 2);
  AutocastScope bf16(PrecisionMode::bf16, c10::kCPU);
  const at::Tensor out = dp.forward(at::randn({6, 4}));
  EXPECT_EQ(out.scalar_type(), at::kBFloat16) << "replica 1 ran without autocast";
}

TEST(DataParallel, AFactoryThatBuildsAnotherShapeIsRefused) {
  auto model = std::make_shared<TwoLayers>(5);
  try {
    DataParallel({model, std::make_shared<TwoLayers>(7)}, {c10::Device(c10::kCPU), c10::Device(c10::kCPU)});
    FAIL() << "replicas of another shape were accepted";
  } catch (const std::exception& e) { EXPECT_STREQ(e.what(), "dp: replica 1 parameter 0 is 7x4, replica 0's is 5x4"); }
}

}  // namespace data_parallel_test
}  // namespace plugtrain
