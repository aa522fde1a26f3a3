// The host's checkpoint (core/checkpoint) across devices: a small model with a convolution,
// batch norm and a linear layer, trained one step on the device with the trainer's AdamW
// (make_optimizer), saved from the device; loaded onto the CPU and saved again; loaded back onto
// a fresh model on the device. Weights and buffers must be bit-exact at each stop; the optimizer
// state is judged by one more step from the same gradients on the original and on the copy.
#include <ATen/ATen.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/utils.h>
#include <unistd.h>

#include <filesystem>

#include "checkpoint/checkpoint.h"
#include "diagnose/conformance_checks.h"
#include "optim/optimizer_state_on_host.h"
#include "optim/optimizers.h"
#include "version.h"

namespace plugtrain {

namespace {

class CheckpointNet final : public TensorModel {
 public:
  CheckpointNet() {
    conv_ = register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 4, 3).padding(1)));
    bn_ = register_module("bn", torch::nn::BatchNorm2d(4));
    fc_ = register_module("fc", torch::nn::Linear(4 * 4 * 4, 5));
  }
  torch::Tensor forward(torch::Tensor x) override {
    x = at::max_pool2d(at::relu(bn_->forward(conv_->forward(x))), {2, 2});
    return fc_->forward(x.flatten(1));
  }

 private:
  torch::nn::Conv2d conv_{nullptr};
  torch::nn::BatchNorm2d bn_{nullptr};
  torch::nn::Linear fc_{nullptr};
};

struct Trained {
  std::shared_ptr<CheckpointNet> model;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
};

Trained fresh(std::uint64_t seed, c10::Device device) {
  torch::manual_seed(seed);
  Trained t{std::make_shared<CheckpointNet>(), nullptr};
  t.model->to(device);
  Experiment e;
  e.optim.name = OptimizerName::adamw;
  e.optim.weight_decay = 0.01;
  t.optimizer = make_optimizer(e, 1e-2, t.model->parameters());
  return t;
}

// Gradients drawn on the CPU from `seed`, the same for every copy, then one step.
void step_with_gradients(Trained& t, std::uint64_t seed) {
  at::Generator gen = seeded(seed);
  for (auto& p : t.model->parameters()) {
    const at::Tensor g = at::randn(p.sizes(), gen, at::kFloat);
    p.mutable_grad() = copy_to(g, p.device());
  }
  t.optimizer->step();
}

void compare_states(Comparison& c, const std::string& where, Model& got, Model& want) {
  const auto expected = model_state_dict(want);
  const auto actual = model_state_dict(got);
  for (std::size_t i = 0; i < expected.size(); ++i)
    c.exact(expected[i].first + " " + where, actual.at(i).second, expected[i].second);
}

struct TemporaryFolder {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("plugtrain-check-backend-" + std::to_string(::getpid()));
  TemporaryFolder() { std::filesystem::create_directories(path); }
  ~TemporaryFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

CheckResult check_round_trip(ConformanceTarget& t) {
  const c10::Device cpu(c10::kCPU);
  TemporaryFolder folder;
  CheckpointContent content;
  content.experiment_json = "{}";
  content.model_name = "check-backend";
  content.plugtrain_version = PLUGTRAIN_VERSION;

  // Trained on the device: weights, batch-norm statistics and AdamW state that are not fresh.
  Trained original = fresh(1, t.device);
  at::Generator gen = seeded(11);
  const at::Tensor x = copy_to(at::randn({4, 3, 8, 8}, gen, at::kFloat), t.device);
  at::cross_entropy_loss(original.model->forward(x), copy_to(at::tensor({0, 1, 2, 3}, at::kLong), t.device)).backward();
  original.optimizer->step();
  // As the trainer saves (optim/optimizer_state_on_host.h): the optimizer state from host copies.
  with_optimizer_state_on_host(*original.optimizer, [&] {
    save_checkpoint(folder.path / "device.pt", *original.model, *original.optimizer, content, t.device);
  });

  Comparison c;
  Trained on_cpu = fresh(2, cpu);
  load_checkpoint(folder.path / "device.pt", *on_cpu.model, *on_cpu.optimizer, cpu);
  compare_states(c, "on the CPU", *on_cpu.model, *original.model);
  save_checkpoint(folder.path / "cpu.pt", *on_cpu.model, *on_cpu.optimizer, content, cpu);

  Trained back = fresh(3, t.device);
  load_checkpoint(folder.path / "cpu.pt", *back.model, *back.optimizer, t.device);
  compare_states(c, "back on the device", *back.model, *original.model);
  for (const auto& p : back.model->parameters())
    if (p.device() != t.device) c.fail("a parameter loaded onto " + t.device.str() + " is on " + p.device().str());

  // The optimizer's state came along if the same gradients move both the same way.
  step_with_gradients(original, 12);
  step_with_gradients(back, 12);
  compare_states(c, "after one more AdamW step", *back.model, *original.model);
  return c.result("a conv, batch norm, linear model and its AdamW state, device -> CPU -> device");
}

}  // namespace

std::vector<CheckResult> check_checkpoint(ConformanceTarget& t) {
  return {run_check("checkpoint", "round trip", [&] { return check_round_trip(t); })};
}

}  // namespace plugtrain
