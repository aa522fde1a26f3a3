// optim.impl: every form of every optimizer (optim/multi_tensor_forms.h) against torch::optim's
// own loop (and, for Lion, the loop it had before its forms shared one algorithm), on the CPU:
// the loop form bit for bit, fused and foreach within 1e-6 relative after several steps with
// weight decay and a changing learning rate, a parameter whose gradient appears only later;
// the same state classes and keys, checkpoints that move between the forms and torch::optim's
// classes, and the choice "auto" makes.
// ctest-label: unit
#include <fstream>
#include <functional>
#include <sstream>

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include "config/experiment_loader.h"
#include "optim/fused_optimizers.h"
#include "optim/lion.h"
#include "optim/multi_tensor_adam.h"
#include "optim/multi_tensor_rmsprop.h"
#include "optim/multi_tensor_sgd.h"
#include "optim/optimizers.h"
#include "support/experiment_toml.h"
#include "support/run_folder.h"
#include "support/run_process.h"
#include "train/precision.h"
#include "util/error.h"

namespace plugtrain {
namespace fused_optimizers_test {

using torch::optim::Optimizer;
using Make = std::function<std::unique_ptr<Optimizer>(const std::vector<at::Tensor>&, OptimizerImpl)>;
using MakeReference = std::function<std::unique_ptr<Optimizer>(const std::vector<at::Tensor>&)>;

constexpr int kSteps = 6;
constexpr int kLateStep = 2;  // the step from which `late` has a gradient
constexpr double kTolerance = 1e-6;

// A two-layer network as bare leaf tensors: w1, b1, late (added to the logits from kLateStep
// on, so its first step comes after the others' and the lists are built again), w2, b2; and
// `unused`, which never has a gradient.
std::vector<at::Tensor> initial_parameters() {
  at::manual_seed(11);
  std::vector<at::Tensor> p = {at::randn({16, 12}) * 0.3, at::randn({16}) * 0.1, at::randn({5}) * 0.1,
                               at::randn({5, 16}) * 0.3,  at::randn({5}) * 0.1,  at::randn({3})};
  for (auto& t : p) t.requires_grad_();
  return p;
}

std::vector<at::Tensor> copy_of(const std::vector<at::Tensor>& params) {
  std::vector<at::Tensor> out;
  for (const auto& p : params) out.push_back(p.detach().clone().requires_grad_());
  return out;
}

struct Batch {
  at::Tensor x, y;
};

const std::vector<Batch>& batches() {
  static const std::vector<Batch> b = [] {
    at::manual_seed(12);
    std::vector<Batch> v;
    for (int i = 0; i < kSteps; ++i) v.push_back({at::randn({8, 12}), at::randint(0, 5, {8})});
    return v;
  }();
  return b;
}

double lr_at(double base, int step) { return base * (1.0 + 0.25 * step); }  // changes every step

// Steps [from, to) of training `params` with `optimizer`.
void train(Optimizer& optimizer, const std::vector<at::Tensor>& params, double base_lr, int from, int to) {
  for (int step = from; step < to; ++step) {
    set_lr(optimizer, lr_at(base_lr, step));
    optimizer.zero_grad();
    const Batch& b = batches()[step];
    at::Tensor logits = at::linear(at::relu(at::linear(b.x, params[0], params[1])), params[3], params[4]);
    if (step >= kLateStep) logits = logits + params[2];
    at::cross_entropy_loss(logits, b.y).backward();
    optimizer.step();
  }
}

// max |a - b| <= kTolerance * max |b|, for every tensor.
void expect_close(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].defined(), b[i].defined()) << what << " tensor " << i;
    if (!a[i].defined()) continue;
    const double diff = (a[i].detach() - b[i].detach()).abs().max().item<double>();
    const double scale = b[i].detach().abs().max().item<double>();
    EXPECT_LE(diff, kTolerance * std::max(scale, 1e-12))
        << what << " tensor " << i << ": max difference " << diff << " of max " << scale;
  }
}

void expect_equal(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].defined(), b[i].defined()) << what << " tensor " << i;
    if (a[i].defined()) {
      EXPECT_TRUE(at::equal(a[i].detach(), b[i].detach())) << what << " tensor " << i << " differs";
    }
  }
}

// Every state tensor and step count, by parameter, whatever the optimizer.
struct StateView {
  std::vector<at::Tensor> tensors;
  std::vector<std::int64_t> steps;
};

StateView state_of(const Optimizer& optimizer, const std::vector<at::Tensor>& params) {
  StateView v;
  for (const auto& p : params) {
    const auto found = optimizer.state().find(p.unsafeGetTensorImpl());
    if (found == optimizer.state().end()) {
      v.steps.push_back(-1);
      continue;
    }
    const auto* s = found->second.get();
    if (auto a = dynamic_cast<const torch::optim::AdamParamState*>(s)) {
      v.tensors.insert(v.tensors.end(), {a->exp_avg(), a->exp_avg_sq(), a->max_exp_avg_sq()});
      v.steps.push_back(a->step());
    } else if (auto w = dynamic_cast<const torch::optim::AdamWParamState*>(s)) {
      v.tensors.insert(v.tensors.end(), {w->exp_avg(), w->exp_avg_sq(), w->max_exp_avg_sq()});
      v.steps.push_back(w->step());
    } else if (auto g = dynamic_cast<const torch::optim::SGDParamState*>(s)) {
      v.tensors.push_back(g->momentum_buffer());
      v.steps.push_back(0);
    } else if (auto r = dynamic_cast<const torch::optim::RMSpropParamState*>(s)) {
      v.tensors.insert(v.tensors.end(), {r->square_avg(), r->momentum_buffer(), r->grad_avg()});
      v.steps.push_back(r->step());
    } else if (auto l = dynamic_cast<const LionParamState*>(s)) {
      v.tensors.push_back(l->exp_avg());
      v.steps.push_back(0);
    } else {
      ADD_FAILURE() << "unknown state class";
    }
  }
  return v;
}

// Lion's loop as it was before its forms shared one algorithm (torch::optim has no Lion).
class ReferenceLion final : public Lion {
 public:
  using Lion::Lion;
  at::Tensor step(LossClosure /*closure*/ = nullptr) override {
    at::NoGradGuard no_grad;
    for (auto& group : param_groups_) {
      auto& options = static_cast<LionOptions&>(group.options());
      const double lr = options.lr();
      const auto [beta1, beta2] = options.betas();
      for (auto& p : group.params()) {
        if (!p.grad().defined()) continue;
        const auto& grad = p.grad();
        auto& slot = state_[p.unsafeGetTensorImpl()];
        if (!slot) {
          auto fresh = std::make_unique<LionParamState>();
          fresh->exp_avg(at::zeros_like(p, at::MemoryFormat::Preserve));
          slot = std::move(fresh);
        }
        auto& exp_avg = static_cast<LionParamState&>(*slot).exp_avg();
        if (options.weight_decay() != 0) p.mul_(1 - lr * options.weight_decay());
        auto update = exp_avg.mul(beta1).add_(grad, 1 - beta1).sign_();
        p.add_(update, -lr);
        exp_avg.mul_(beta2).add_(grad, 1 - beta2);
      }
    }
    return {};
  }
};

struct Case {
  std::string name;
  double lr;
  Make make;                         // ours, in the form asked for
  MakeReference reference;           // torch::optim's own (or ReferenceLion)
  std::vector<OptimizerImpl> impls;  // the forms it has
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

const auto kAll = std::vector<OptimizerImpl>{OptimizerImpl::loop, OptimizerImpl::foreach, OptimizerImpl::fused};
const auto kNoFused = std::vector<OptimizerImpl>{OptimizerImpl::loop, OptimizerImpl::foreach};

template <class Ours, class Reference, class Options>
Case make_case(std::string name, double lr, Options o, std::vector<OptimizerImpl> impls) {
  return {
      std::move(name), lr,
      [o](const std::vector<at::Tensor>& p, OptimizerImpl impl) -> std::unique_ptr<Optimizer> {
        return std::make_unique<Ours>(p, o, impl);
      },
      [o](const std::vector<at::Tensor>& p) -> std::unique_ptr<Optimizer> { return std::make_unique<Reference>(p, o); },
      std::move(impls)};
}

std::vector<Case> cases() {
  using namespace torch::optim;
  auto sgd = [](std::string name, SGDOptions o) { return make_case<MultiTensorSGD, SGD>(name, 0.05, o, kAll); };
  auto adam = [](std::string name, AdamOptions o) { return make_case<MultiTensorAdam, Adam>(name, 0.01, o, kAll); };
  auto adamw = [](std::string name, AdamWOptions o) { return make_case<MultiTensorAdamW, AdamW>(name, 0.01, o, kAll); };
  auto rmsprop = [](std::string name, RMSpropOptions o) {
    return make_case<MultiTensorRMSprop, RMSprop>(name, 0.01, o, kNoFused);
  };
  auto lion = [](std::string name, LionOptions o) {
    return make_case<MultiTensorLion, ReferenceLion>(name, 0.001, o, kNoFused);
  };
  return {
      sgd("sgd", SGDOptions(0.05)),
      sgd("sgd_wd", SGDOptions(0.05).weight_decay(0.01)),
      sgd("sgd_momentum_wd", SGDOptions(0.05).momentum(0.9).weight_decay(0.01)),
      sgd("sgd_nesterov_wd", SGDOptions(0.05).momentum(0.9).nesterov(true).weight_decay(0.01)),
      sgd("sgd_dampening", SGDOptions(0.05).momentum(0.8).dampening(0.3).weight_decay(0.01)),
      adam("adam_wd", AdamOptions(0.01).weight_decay(0.01)),
      adam("adam_amsgrad_wd", AdamOptions(0.01).betas({0.8, 0.99}).amsgrad(true).weight_decay(0.01)),
      adamw("adamw_wd", AdamWOptions(0.01).weight_decay(0.05)),
      adamw("adamw_amsgrad", AdamWOptions(0.01).amsgrad(true)),
      rmsprop("rmsprop", RMSpropOptions(0.01)),
      rmsprop("rmsprop_momentum_wd", RMSpropOptions(0.01).momentum(0.9).weight_decay(0.01)),
      rmsprop("rmsprop_centered_wd", RMSpropOptions(0.01).centered(true).weight_decay(0.01)),
      lion("lion", LionOptions(0.001)),
      lion("lion_wd", LionOptions(0.001).weight_decay(0.1)),
  };
}

class EveryOptimizer : public ::testing::TestWithParam<Case> {};

TEST_P(EveryOptimizer, MultiTensorFormsMatchTheLoopAndKeepItsState) {
  const Case& c = GetParam();
  const std::vector<at::Tensor> reference = copy_of(initial_parameters());
  auto loop = c.reference(reference);
  train(*loop, reference, c.lr, 0, kSteps);
  const StateView expected = state_of(*loop, reference);
  EXPECT_EQ(expected.steps.back(), -1) << "the parameter without a gradient has no state";
  for (OptimizerImpl impl : c.impls) {
    const std::string what = c.name + " " + to_string(impl);
    const std::vector<at::Tensor> params = copy_of(initial_parameters());
    auto optimizer = c.make(params, impl);
    train(*optimizer, params, c.lr, 0, kSteps);
    const StateView got = state_of(*optimizer, params);
    EXPECT_EQ(got.steps, expected.steps) << what << ": the same state objects with the same step counts";
    if (impl == OptimizerImpl::loop) {  // the same operations on each tensor: the same bits
      expect_equal(params, reference, what + " parameters");
      expect_equal(got.tensors, expected.tensors, what + " state");
    } else {
      expect_close(params, reference, what + " parameters");
      expect_close(got.tensors, expected.tensors, what + " state");
    }
  }
}

// Half the steps with one form (or torch::optim's own class), a checkpoint of the optimizer
// (and the parameters), the rest with another: the same as all the steps with the loop.
TEST_P(EveryOptimizer, ACheckpointResumesWithAnyOtherForm) {
  const Case& c = GetParam();
  const std::vector<at::Tensor> reference = copy_of(initial_parameters());
  auto loop = c.reference(reference);
  train(*loop, reference, c.lr, 0, kSteps);

  struct Form {
    std::string name;
    MakeReference make;
  };
  std::vector<Form> forms = {{"torch::optim", c.reference}};
  for (OptimizerImpl impl : c.impls)
    forms.push_back({to_string(impl), [&c, impl](const std::vector<at::Tensor>& p) { return c.make(p, impl); }});
  for (std::size_t i = 0; i < forms.size(); ++i) {
    for (std::size_t j = 0; j < forms.size(); ++j) {
      if (i == j) continue;
      const std::string what = c.name + " " + forms[i].name + " -> " + forms[j].name;
      const std::vector<at::Tensor> before = copy_of(initial_parameters());
      auto first = forms[i].make(before);
      train(*first, before, c.lr, 0, kSteps / 2 + 1);  // the late parameter has stepped once
      torch::serialize::OutputArchive archive;
      first->save(archive);
      std::ostringstream bytes;
      archive.save_to(bytes);

      const std::vector<at::Tensor> after = copy_of(before);
      auto second = forms[j].make(after);
      torch::serialize::InputArchive in;
      std::istringstream read(bytes.str());
      in.load_from(read);
      second->load(in);
      train(*second, after, c.lr, kSteps / 2 + 1, kSteps);
      expect_close(after, reference, what + " parameters");
      expect_close(state_of(*second, after).tensors, state_of(*loop, reference).tensors, what + " state");
      EXPECT_EQ(state_of(*second, after).steps, state_of(*loop, reference).steps) << what;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(FusedOptimizers, EveryOptimizer, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(FusedOptimizers, AutoIsFusedWhereTheKernelExistsAndForeachElsewhere) {
  const std::vector<at::Tensor> params = initial_parameters();
  for (OptimizerName name : {OptimizerName::sgd, OptimizerName::adam, OptimizerName::adamw})
    EXPECT_EQ(resolve_optimizer_impl(name, std::nullopt, params), OptimizerImpl::fused) << word_of(name);
  for (OptimizerName name : {OptimizerName::rmsprop, OptimizerName::lion}) {
    EXPECT_EQ(resolve_optimizer_impl(name, std::nullopt, params), OptimizerImpl::foreach) << word_of(name);
    EXPECT_THROW(resolve_optimizer_impl(name, OptimizerImpl::fused, params), Error) << word_of(name);
  }
  EXPECT_EQ(resolve_optimizer_impl(OptimizerName::adam, OptimizerImpl::loop, params), OptimizerImpl::loop);
  EXPECT_EQ(resolve_optimizer_impl(OptimizerName::adam, OptimizerImpl::foreach, params), OptimizerImpl::foreach);
  // Parameters of two types: no single fused call steps them.
  const std::vector<at::Tensor> mixed = {at::zeros({2}).requires_grad_(), at::zeros({2}, at::kDouble).requires_grad_()};
  EXPECT_EQ(resolve_optimizer_impl(OptimizerName::adam, std::nullopt, mixed), OptimizerImpl::foreach);
  try {
    resolve_optimizer_impl(OptimizerName::adam, OptimizerImpl::fused, mixed);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not all on one device and of one type"), std::string::npos) << e.what();
  }
}

TEST(FusedOptimizers, MakeOptimizerBuildsTheFormOptimImplNames) {
  const std::vector<at::Tensor> params = initial_parameters();
  Experiment e;
  e.optim.name = OptimizerName::adam;
  EXPECT_NE(dynamic_cast<MultiTensorAdam*>(make_optimizer(e, 0.1, params).get()), nullptr) << "auto: fused";
  EXPECT_EQ(dynamic_cast<MultiTensorAdam&>(*make_optimizer(e, 0.1, params)).impl(), OptimizerImpl::fused);
  e.optim.impl = OptimizerImpl::loop;
  auto loop = make_optimizer(e, 0.1, params);
  EXPECT_EQ(dynamic_cast<MultiTensorAdam&>(*loop).impl(), OptimizerImpl::loop);
  EXPECT_NE(dynamic_cast<torch::optim::Adam*>(loop.get()), nullptr) << "torch::optim's class, state and checkpoints";
  const Result<ReplayableOptimizer*> not_replayable = replayable(*loop);
  EXPECT_FALSE(not_replayable.ok());
  EXPECT_FALSE(not_replayable.why_not().empty());
  e.optim.impl = std::nullopt;
  EXPECT_TRUE(replayable(*make_optimizer(e, 0.1, params)).ok()) << "auto: fused, replayable";
  e.optim.name = OptimizerName::lion;
  EXPECT_EQ(dynamic_cast<MultiTensorLion&>(*make_optimizer(e, 0.1, params)).impl(), OptimizerImpl::foreach);
  e.optim.name = OptimizerName::rmsprop;
  EXPECT_EQ(dynamic_cast<MultiTensorRMSprop&>(*make_optimizer(e, 0.1, params)).impl(), OptimizerImpl::foreach);
  e.optim.name = OptimizerName::sgd;
  e.optim.impl = OptimizerImpl::foreach;
  EXPECT_EQ(dynamic_cast<MultiTensorSGD&>(*make_optimizer(e, 0.1, params)).impl(), OptimizerImpl::foreach);
}

TEST(FusedOptimizers, AnOverflowingFp16StepLeavesTheFusedStateAlone) {
  Precision fp16(PrecisionMode::fp16, c10::Device(c10::kCPU));
  const std::vector<at::Tensor> params = copy_of(initial_parameters());
  MultiTensorAdam adam(params, torch::optim::AdamOptions(0.01), OptimizerImpl::fused);
  const at::Tensor before = params[0].detach().clone();
  fp16.backward(params[0].sum() * std::numeric_limits<float>::infinity());
  EXPECT_FALSE(fp16.step(adam, params, 0.0));
  EXPECT_TRUE(adam.state().empty()) << "a skipped step makes no state";
  EXPECT_TRUE(at::equal(params[0], before));
  adam.zero_grad();
  fp16.backward(params[0].sum());  // scaled by 32768: unscaled before the fused step
  EXPECT_TRUE(fp16.step(adam, params, 0.0));
  const auto& s = static_cast<const torch::optim::AdamParamState&>(*adam.state().at(params[0].unsafeGetTensorImpl()));
  EXPECT_EQ(s.step(), 1);
  // Adam's first step moves every weight by lr (gradient 1 everywhere after unscaling).
  EXPECT_TRUE(at::allclose(params[0].detach(), before - 0.01, 1e-5, 1e-7));
  EXPECT_TRUE(at::allclose(s.exp_avg(), at::full_like(before, 0.1), 1e-6, 1e-8));
}

TEST(FusedOptimizers, FusedNeedsAnOptimizerWithAFusedKernel) {
  const std::filesystem::path dir = testing::scratch_dir("impl");
  const std::string file = dir / "exp.toml";
  std::ofstream(file) << "[model]\nname = \"mlp\"\n[optim]\nname = \"lion\"\nimpl = \"fused\"\n";
  try {
    resolve_experiment(parse_experiment_file(file));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(":5:8: optim.impl = \"fused\": ATen has no fused lion kernel"),
              std::string::npos)
        << e.what();
  }
  std::ofstream(file) << "[model]\nname = \"mlp\"\n[optim]\nname = \"sgd\"\nimpl = \"fused\"\n";
  EXPECT_EQ(resolve_experiment(parse_experiment_file(file)).optim.impl, OptimizerImpl::fused);
  std::filesystem::remove_all(dir);
}

// The run's header names the form; a checkpoint written with the loop resumes with "auto".
TEST(FusedOptimizers, ARunNamesItsFormAndResumesALoopCheckpointFused) {
  const std::filesystem::path dir = testing::scratch_dir("impl-run");
  testing::ExperimentToml::synthetic("impl")
      .unset("experiment.seed")
      .set("model.hidden", {16})
      .set("data.synthetic_shape", {1, 4, 4})
      .unset("data.synthetic_classes")
      .set("data.synthetic_train_size", 400)
      .set("data.synthetic_test_size", 100)
      .unset("optim")
      .set("optim.name", "adam")
      .set("train.epochs", 2)
      .write(dir / "exp.toml");
  const auto run = [&](const std::string& args) {
    return testing::run_process(testing::plugtrain_command("run exp.toml " + args, "", dir));
  };
  const auto loop = run("--set optim.impl='\"loop\"' --set train.epochs=1");
  ASSERT_EQ(loop.exit_code, 0) << loop.out;
  EXPECT_NE(loop.out.find("optimizer adam (loop) lr 0.001"), std::string::npos) << loop.out;
  const auto resumed = run("--resume last");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  EXPECT_NE(resumed.out.find("optimizer adam (fused) lr 0.001"), std::string::npos) << resumed.out;
  const nlohmann::json summary = testing::run_summary(dir, "impl", 0);
  EXPECT_EQ(summary["resumed_from"]["epochs_done"], 1) << resumed.out;
  EXPECT_EQ(summary["epochs"].back()["epoch"], 2) << resumed.out;
  std::filesystem::remove_all(dir);
}

}  // namespace fused_optimizers_test
}  // namespace plugtrain
