// The one base of every optimizer (optim/optimizers.cpp builds them): each is a subclass of the
// LibTorch optimizer it stands for (MultiTensor<torch::optim::Adam>, ...; MultiTensor<Lion>)
// with the same options and the same per-parameter state classes and keys (AdamParamState
// exp_avg, exp_avg_sq, step; SGDParamState momentum_buffer; ...), saved and loaded by that
// class, so every checkpoint is LibTorch's whatever the form: a run written with one form
// resumes with any other, and checkpoints written by torch::optim's own classes load.
//
// The base keeps each parameter group's lists (optim/multi_tensor_lists.h), runs step() (the
// closure, gathering the gradients, building the lists and the state when they changed,
// advancing the host step counts) and hands each group to its form (optim/multi_tensor_forms.h),
// which runs the algorithm's arithmetic: each optimizer's file writes only that
// (MultiTensorAlgorithm). It is also what a replayed step needs (ReplayableOptimizer,
// optim/fused_optimizers.h), which replayable() offers for the fused form.
//
// The per-parameter `step` in the state objects is kept on the host in every form, so the state
// reads as LibTorch's at any time (a step replayed from a captured graph advances only the
// device counts: sync_host_steps() before the state is saved).
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/optim/optimizer.h>
#include <torch/serialize/input-archive.h>

#include "config/choices.h"
#include "optim/fused_optimizers.h"
#include "optim/multi_tensor_forms.h"
#include "optim/multi_tensor_lists.h"

namespace plugtrain {

class MultiTensorOptimizer : public ReplayableOptimizer, public MultiTensorAlgorithm {
 public:
  MultiTensorOptimizer(const MultiTensorOptimizer&) = delete;
  MultiTensorOptimizer& operator=(const MultiTensorOptimizer&) = delete;

  OptimizerImpl impl() const { return form_.impl(); }

  void write_lr() override;
  std::vector<std::int64_t> host_steps() const override;
  void restore_host_steps(const std::vector<std::int64_t>& steps) override;
  void skip_when(at::Tensor found_inf) override { found_inf_ = std::move(found_inf); }
  void sync_host_steps() override;
  bool ready_to_record() const override;
  std::int64_t layout() const override { return layout_; }

 protected:
  explicit MultiTensorOptimizer(OptimizerImpl impl) : form_(optimizer_form(impl)) {}

  // torch::optim::Optimizer::step for every optimizer and form.
  at::Tensor run_step(const torch::optim::Optimizer::LossClosure& closure);
  // After load(): the state objects were replaced, so the lists are built again.
  void forget_lists() { lists_.clear(); }

 private:
  // The LibTorch optimizer this is (MultiTensor<Torch> below): its groups and state.
  virtual torch::optim::Optimizer& torch_optimizer() = 0;
  void build(std::size_t group, std::int64_t shape);

  const OptimizerForm& form_;
  std::vector<GroupLists> lists_;  // one per parameter group
  at::Tensor found_inf_;           // skip_when
  std::int64_t layout_ = 0;
};

// `Torch` (torch::optim::Adam, ...: its options, state classes, save and load) stepped by the
// shared base: an optimizer derives from MultiTensor<Torch> and defines MultiTensorAlgorithm.
template <class Torch>
class MultiTensor : public Torch, public MultiTensorOptimizer {
 public:
  template <class Options>
  MultiTensor(std::vector<at::Tensor> params, Options options, OptimizerImpl impl)
      : Torch(std::move(params), std::move(options)), MultiTensorOptimizer(impl) {}

  at::Tensor step(torch::optim::Optimizer::LossClosure closure = nullptr) final { return run_step(closure); }
  void load(torch::serialize::InputArchive& archive) final {
    Torch::load(archive);
    forget_lists();
  }

 private:
  torch::optim::Optimizer& torch_optimizer() final { return *this; }
};

}  // namespace plugtrain
