// The "exported" model against eager PyTorch (plugins/exported): tests/python/exported_reference.py
// exports four modules in train mode and trains each from the exported weights for 20 steps with
// SGD (momentum, weight decay) and 20 with AdamW on fixed batches, reseeding before every
// forward; this test trains the .pt2 the same way through the interpreter and compares.
//
// The tolerance: both sides call the same ATen kernels in the same order on one thread, so the
// forward and backward are the same arithmetic, and so are the optimizer steps: SGD is LibTorch's
// (op for op PyTorch's single-tensor SGD), AdamW is written here op for op as PyTorch's
// single-tensor AdamW (LibTorch's AdamW rounds otherwise: mul_ and add_ for lerp_, and Adam
// turns a last-bit difference in a near-zero gradient into a whole step of lr). The runs then
// agree to the last bit or nearly: 1e-5 relative bounds rounding left in the reductions and still
// fails for any real difference (a wrong flag, a missed buffer update, another dropout mask).
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>
#include <torch/serialize.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "data/model_description.h"
#include "exported_model.h"
#include "support/run_process.h"

namespace plugtrain::exported {
namespace {

namespace fs = std::filesystem;

// The model's .pt2 and reference, written by Python into this process's own folder.
fs::path fixtures(const std::string& model) {
  const fs::path dir = fs::temp_directory_path() / ("exported_ref_" + std::to_string(::getpid()));
  if (fs::exists(dir / (model + "_reference.pt"))) return dir;
  fs::create_directories(dir);
  const std::string command = std::string(PLUGTRAIN_PYTHON) + " " PLUGTRAIN_SOURCE_DIR
                              "/tests/python/exported_reference.py --threads 1 --models " + model + " --out " +
                              dir.string() + " 2>&1";
  const testing::ProcessResult r = testing::run_process(command);
  if (r.exit_code != 0) throw std::runtime_error("exported_reference.py failed: " + r.out);
  return dir;
}

c10::Dict<c10::IValue, c10::IValue> reference(const std::string& model) {
  std::ifstream in(fixtures(model) / (model + "_reference.pt"), std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return torch::pickle_load(bytes).toGenericDict();
}

at::Tensor entry(const c10::Dict<c10::IValue, c10::IValue>& d, const std::string& key) {
  return d.at(key).toTensor();
}

ModelDescription description(const std::string& model) {
  if (model != "gpt") return image_model_description({3, 32, 32}, 10);
  ModelDescription d;
  d.batch.add("input", {c10::ScalarType::Long, {16}, ""});
  d.target.kind_ = DatasetTargets::sequence;
  d.target.classes_ = d.target.model_outputs_ = 64;
  return d;
}

double relative(const at::Tensor& got, const at::Tensor& want) {
  const double scale = std::max(want.abs().max().item<double>(), 1e-12);
  return (got.to(at::kDouble) - want.to(at::kDouble)).abs().max().item<double>() / scale;
}

at::Tensor loss_of(const at::Tensor& logits, const at::Tensor& targets) {
  return torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}), targets.reshape({-1}));
}

// torch.optim.AdamW(foreach=False)'s _single_tensor_adam with decoupled weight decay, op for op.
class PyTorchAdamW {
 public:
  PyTorchAdamW(std::vector<at::Tensor> params, double lr, double beta1, double beta2, double eps, double decay)
      : params_(std::move(params)), lr_(lr), beta1_(beta1), beta2_(beta2), eps_(eps), decay_(decay) {
    for (const auto& p : params_) {
      exp_avg_.push_back(at::zeros_like(p));
      exp_avg_sq_.push_back(at::zeros_like(p));
    }
  }
  void step() {
    torch::NoGradGuard no_grad;
    ++step_;
    const double bias_correction1 = 1 - std::pow(beta1_, step_);
    const double bias_correction2_sqrt = std::sqrt(1 - std::pow(beta2_, step_));
    for (size_t i = 0; i < params_.size(); ++i) {
      at::Tensor& p = params_[i];
      if (!p.grad().defined()) continue;
      const at::Tensor& grad = p.grad();
      p.mul_(1 - lr_ * decay_);
      exp_avg_[i].lerp_(grad, 1 - beta1_);
      exp_avg_sq_[i].mul_(beta2_).addcmul_(grad, grad, 1 - beta2_);
      const at::Tensor denom = (exp_avg_sq_[i].sqrt() / bias_correction2_sqrt).add_(eps_);
      p.addcdiv_(exp_avg_[i], denom, -(lr_ / bias_correction1));
    }
  }

 private:
  std::vector<at::Tensor> params_, exp_avg_, exp_avg_sq_;
  double lr_, beta1_, beta2_, eps_, decay_;
  std::int64_t step_ = 0;
};

class ExportedParity : public ::testing::TestWithParam<std::string> {};

TEST_P(ExportedParity, TrainsLikeEagerPyTorchWithSgdAndAdamW) {
  const std::string model = GetParam();
  const auto ref = reference(model);
  at::set_num_threads(int(entry(ref, "threads").item<std::int64_t>()));
  const auto loaded = load_program(fixtures(model) / (model + ".pt2"));
  const at::Tensor inputs = entry(ref, "inputs"), targets = entry(ref, "targets");
  for (const std::string optimizer : {"sgd", "adamw"}) {
    const ModelDescription d = description(model);
    auto net = std::make_shared<ExportedModel>(loaded, d.batch, d.target);
    for (const auto& item : net->named_parameters()) EXPECT_TRUE(item.value().equal(entry(ref, "init/" + item.key())));
    torch::optim::SGD sgd(net->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9).weight_decay(5e-4));
    PyTorchAdamW adamw(net->parameters(), 1e-3, 0.9, 0.999, 1e-8, 0.01);
    const at::Tensor want_losses = entry(ref, optimizer + "_losses");
    double worst_loss = 0;
    net->train();
    for (std::int64_t step = 0; step < inputs.size(0); ++step) {
      at::manual_seed(1000 + step);
      const at::Tensor loss = loss_of(net->forward_batch({{"input", inputs[step]}}).at("output"), targets[step]);
      sgd.zero_grad(true);  // the same parameters as adamw's
      loss.backward();
      if (optimizer == "sgd") sgd.step(); else adamw.step();
      const double want = want_losses[step].item<double>();
      worst_loss = std::max(worst_loss, std::abs(loss.item<double>() - want) / std::abs(want));
    }
    EXPECT_LE(worst_loss, 1e-5) << model << " " << optimizer;
    double worst_weight = 0;
    std::size_t compared = 0;
    for (const auto& item : net->named_parameters()) {
      worst_weight = std::max(worst_weight, relative(item.value(), entry(ref, optimizer + "_final/" + item.key())));
      ++compared;
    }
    for (const auto& item : net->named_buffers()) {
      const at::Tensor want = entry(ref, optimizer + "_final/" + item.key());
      if (item.key().find("num_batches_tracked") != std::string::npos) EXPECT_TRUE(item.value().equal(want)) << item.key();
      else EXPECT_LE(relative(item.value(), want), 1e-5) << model << " " << optimizer << " " << item.key();
      ++compared;
    }
    EXPECT_LE(worst_weight, 1e-5) << model << " " << optimizer;
    net->eval();
    torch::NoGradGuard no_grad;
    const double eval_loss =
        loss_of(net->forward_batch({{"input", entry(ref, "eval_inputs")}}).at("output"), entry(ref, "eval_targets"))
            .item<double>();
    const double want_eval = entry(ref, optimizer + "_eval_loss").item<double>();
    EXPECT_LE(std::abs(eval_loss - want_eval) / std::abs(want_eval), 1e-5) << model << " " << optimizer;
    std::printf("parity %s %s: %zu tensors, largest relative loss difference %.2e, weight %.2e, eval loss %.6f vs %.6f\n",
                model.c_str(), optimizer.c_str(), compared, worst_loss, worst_weight, eval_loss, want_eval);
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ExportedParity, ::testing::Values("resnet18", "mobilenet_v3_small", "vit", "gpt"));

}  // namespace
}  // namespace plugtrain::exported
