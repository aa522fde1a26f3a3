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
// fails for any real difference (a wrong flag, a missed buffer update, another dropout mask). The
// graph runs as exported, without the graph pass (graph_fusion.h), whose fused kernels would not
// be ATen's arithmetic.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <ATen/Parallel.h>
#include <ATen/ops/cross_entropy_loss.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/optim/sgd.h>

#include "data/model_description.h"
#include "exported_model.h"
#include "support/experiment_toml.h"
#include "support/run_folder.h"
#include "support/run_process.h"

namespace plugtrain::exported {
namespace {

namespace fs = std::filesystem;

// The model's .pt2 and reference, written by Python into this process's own folder.
fs::path fixtures(const std::string& model) {
  const fs::path dir = fs::temp_directory_path() / ("exported_ref_" + std::to_string(::getpid()));
  if (fs::exists(dir / (model + "_reference.pt"))) return dir;
  fs::create_directories(dir);
  const std::string command = std::string(PLUGTRAIN_PYTHON) +
                              " " PLUGTRAIN_SOURCE_DIR "/tests/python/exported_reference.py --threads 1 --models " +
                              model + " --out " + dir.string() + " 2>&1";
  const testing::ProcessResult r = testing::run_process(command);
  if (r.exit_code != 0) throw std::runtime_error("exported_reference.py failed: " + r.out);
  return dir;
}

c10::Dict<c10::IValue, c10::IValue> reference(const std::string& model) {
  std::ifstream in(fixtures(model) / (model + "_reference.pt"), std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return torch::jit::pickle_load(bytes).toGenericDict();
}

at::Tensor entry(const c10::Dict<c10::IValue, c10::IValue>& d, const std::string& key) { return d.at(key).toTensor(); }

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
  return at::cross_entropy_loss(logits.reshape({-1, logits.size(-1)}), targets.reshape({-1}));
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
  const fs::path file = fixtures(model) / (model + ".pt2");
  const auto started = std::chrono::steady_clock::now();
  // The graph as exported (model.fused = false): the graph pass's fused kernels round otherwise
  // than ATen's ops, and AdamW turns a last-bit difference into a step (exported_fusion_test.cpp
  // holds the pass to the graph as exported).
  const auto loaded = load_program(file, /*graph_pass=*/false);
  std::printf("%s.pt2: %.1f MB read and compiled in %.0f ms\n", model.c_str(), double(fs::file_size(file)) / 1e6,
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
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
      if (optimizer == "sgd")
        sgd.step();
      else
        adamw.step();
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
      if (item.key().find("num_batches_tracked") != std::string::npos)
        EXPECT_TRUE(item.value().equal(want)) << item.key();
      else
        EXPECT_LE(relative(item.value(), want), 1e-5) << model << " " << optimizer << " " << item.key();
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
    std::printf(
        "parity %s %s: %zu tensors, largest relative loss difference %.2e, weight %.2e, eval loss %.6f vs %.6f\n",
        model.c_str(), optimizer.c_str(), compared, worst_loss, worst_weight, eval_loss, want_eval);
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ExportedParity, ::testing::Values("resnet18", "mobilenet_v3_small", "vit", "gpt"));

// A graph's nodes refused when the program is compiled, each in one line naming file, node and
// operator (as read_program hands them over; no archive needed).
std::string compile_error(const nlohmann::json& node) {
  Program p;
  p.file = "net.pt2";
  p.inputs.push_back({InputKind::user_input, "x", "", true, {}});
  p.nodes = nlohmann::json::array({node});
  try {
    GraphProgram graph(p);
  } catch (const ProgramError& e) { return e.what(); }
  return "compiled";
}

TEST(ExportedGraph, NodesItCannotRunAreRefusedNamingFileNodeAndOperator) {
  const auto x = nlohmann::json::parse(R"({"name": "self", "arg": {"as_tensor": {"name": "x"}}, "kind": 1})");
  const auto out = nlohmann::json::parse(R"([{"as_tensor": {"name": "y"}}])");
  EXPECT_EQ(
      compile_error({{"target", "torch.ops.aten.relu.default"}, {"name", "relu"}, {"inputs", {x}}, {"outputs", out}}),
      "compiled");
  EXPECT_EQ(compile_error(
                {{"target", "torch.ops.aten.frobnicate.default"}, {"name", "frob"}, {"inputs", {x}}, {"outputs", out}}),
            "net.pt2: node frob (aten::frobnicate): unknown operator: this LibTorch has no such operator");
  EXPECT_EQ(
      compile_error({{"target", "torch.ops.higher_order.cond"}, {"name", "cond"}, {"inputs", {x}}, {"outputs", out}}),
      "net.pt2: node cond (torch.ops.higher_order.cond): not an operator plugtrain can run (higher-order "
      "operators and Python functions are not supported)");
  auto graph_arg = x;
  graph_arg["arg"] = {{"as_graph", {{"name", "g"}, {"graph", nlohmann::json::object()}}}};
  EXPECT_EQ(
      compile_error(
          {{"target", "torch.ops.aten.relu.default"}, {"name", "relu"}, {"inputs", {graph_arg}}, {"outputs", out}}),
      "net.pt2: node relu (aten::relu): argument self of kind as_graph is not supported (higher-order "
      "operators, custom objects and nested lists are not)");
}

// A new user's whole path: a Python class, python/export_model.py, `plugtrain run` (a last batch
// smaller than the others: the dynamic batch), `plugtrain export`, and the weights back into the
// original class with load_state_dict(strict=True); then what is refused, in one line each.
class ExportedRun : public ::testing::Test {
 protected:
  fs::path dir_ = fs::temp_directory_path() / ("exported_run_" + std::to_string(::getpid()));
  void SetUp() override {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "net.py") << R"(import torch.nn as nn
class Net(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(1))
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.1), nn.Linear(8, classes))
    def forward(self, x):
        return self.head(self.features(x))
)";
  }
  void TearDown() override { fs::remove_all(dir_); }
  testing::ProcessResult sh(const std::string& command) const {
    return testing::run_process("cd " + dir_.string() + " && " + command);
  }
  std::string python() const { return PLUGTRAIN_PYTHON; }
  // The exported `file` trained for two epochs on 256 synthetic samples of `shape`, on the CPU.
  void write_experiment(const std::string& file, const testing::TomlValue& shape) const {
    testing::ExperimentToml("net")
        .on_cpu()
        .set_keys("model", {{"name", "exported"}, {"file", file}})
        .set_keys("data", {{"dataset", "synthetic"},
                           {"synthetic_shape", shape},
                           {"synthetic_train_size", 256},
                           {"synthetic_test_size", 64},
                           {"batch_size", 50}})
        .set_keys("optim", {{"name", "sgd"}, {"lr", 0.1}, {"momentum", 0.9}})
        .set("train.epochs", 2)
        .write(dir_ / "exp.toml");
  }
};

TEST_F(ExportedRun, APythonClassTrainsAndItsWeightsLoadBackIntoIt) {
  const auto exported = sh(python() + " " PLUGTRAIN_SOURCE_DIR
                                      "/python/export_model.py net.py:Net --input 3x32x32 "
                                      "--out net.pt2");
  ASSERT_EQ(exported.exit_code, 0) << exported.out;
  EXPECT_NE(exported.out.find("name = \"exported\""), std::string::npos) << exported.out;
  write_experiment("net.pt2", {3, 32, 32});
  const auto run = sh(std::string(PLUGTRAIN_EXE) + " run exp.toml");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_EQ(testing::summary_of(dir_ / "runs" / "net" / "version_0")["model"], "exported");
  const auto weights =
      sh(std::string(PLUGTRAIN_EXE) + " export runs/net/version_0/checkpoints/last.ckpt w.pt && " + PLUGTRAIN_EXE +
         " export runs/net/version_0/checkpoints/last.ckpt w.safetensors "
         "--format safetensors");
  ASSERT_EQ(weights.exit_code, 0) << weights.out;
  const auto back = sh(python() +
                       " -c \"import sys, torch; sys.path.insert(0, '.'); from net import Net; "
                       "from safetensors.torch import load_file; m = Net(); "
                       "m.load_state_dict(torch.load('w.pt'), strict=True); "
                       "m.load_state_dict(load_file('w.safetensors'), strict=True); "
                       "print('loaded', len(m.state_dict()), int(m.features[1].num_batches_tracked))\"");
  ASSERT_EQ(back.exit_code, 0) << back.out;
  // 9 keys (conv 2, BatchNorm 5, linear 2); 2 epochs of 6 batches (5 of 50, one of 6): BatchNorm
  // counted 12 training steps and none of the evaluations.
  EXPECT_NE(back.out.find("loaded 9 12"), std::string::npos) << back.out;
}

TEST_F(ExportedRun, WhatCannotTrainIsRefusedInOneLineNamingTheFile) {
  ASSERT_EQ(sh(python() + " -c \"import sys, torch; sys.path.insert(0, '.'); from net import Net; "
                          "torch.export.save(torch.export.export(Net(), (torch.randn(4, 3, 32, 32),)), 'fixed.pt2')\"")
                .exit_code,
            0);
  write_experiment("fixed.pt2", {3, 32, 32});
  auto r = sh(std::string(PLUGTRAIN_EXE) + " run exp.toml");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("fixed.pt2: input x was exported with a fixed batch of 4 (dimension 0) and this batch has 50: "
                       "export it with a dynamic batch"),
            std::string::npos)
      << r.out;
  write_experiment("fixed.pt2", {1, 28, 28});
  r = sh(std::string(PLUGTRAIN_EXE) + " run exp.toml");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("fixed.pt2: input x is (3, 32, 32) per sample in the export, the data set gives (1, 28, 28)"),
            std::string::npos)
      << r.out;
  const auto size = fs::file_size(dir_ / "fixed.pt2");
  fs::resize_file(dir_ / "fixed.pt2", size / 2);
  write_experiment("fixed.pt2", {3, 32, 32});
  r = sh(std::string(PLUGTRAIN_EXE) + " run exp.toml");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("fixed.pt2: not a readable .pt2 archive: no zip directory (truncated, or not a zip)"),
            std::string::npos)
      << r.out;
  write_experiment("missing.pt2", {3, 32, 32});
  r = sh(std::string(PLUGTRAIN_EXE) + " run exp.toml");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("missing.pt2: no such file"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace plugtrain::exported
