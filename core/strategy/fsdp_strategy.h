// fsdp: one process per device, as ddp, but each keeps only its shard of the model's state
// (PyTorch FSDP2's fully_shard; DeepSpeed ZeRO's stages): the optimizer's state (shard =
// "optimizer", ZeRO-1), the gradients too ("gradients", ZeRO-2), and the parameters too ("full",
// ZeRO-3). The model's units (plugtrain/units.h) are sharded one by one: a unit is gathered just
// before its forward (the next one's gathering travels meanwhile) and, with "full", released
// after it, gathered again before its backward and released once its gradients are summed into
// the ranks' shards (reduce-scatter, travelling while backward goes on). The optimizer steps on
// the shards: every optimizer of core/optim, which sees flat tensors.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <vector>

#include "config/choices.h"
#include "plugins/model_forward.h"
#include "plugtrain/model.h"
#include "plugtrain/units.h"
#include "strategy/model_units.h"
#include "strategy/ranks_strategy.h"
#include "strategy/sharded_unit.h"

namespace plugtrain {

struct FsdpOptions {
  c10::Device device = c10::kCPU;  // this rank's; the model's parameters may still be on the host
  ShardLevel level = ShardLevel::full;
  bool checkpoint_units = false;  // train.activation_checkpointing = "blocks"
  // distributed.param_dtype and reduce_dtype: the gathered parameters' type (the model computes
  // in it; floating inputs are cast to it and outputs back to float32, as FSDP2's
  // MixedPrecisionPolicy does) and the gradients' sum's.
  at::ScalarType param_dtype = at::kFloat;
  at::ScalarType reduce_dtype = at::kFloat;
  // The run's optimizer over the model's own parameters (its groups as a one-process run has
  // them): the form of its state in a checkpoint.
  std::function<std::unique_ptr<torch::optim::Optimizer>(const std::vector<at::Tensor>&)> whole_optimizer;
};

class FsdpStrategy final : public RanksStrategy, public UnitRunner {
 public:
  // Shards the model at once (rank 0's weights and buffers first go to every rank), so the
  // optimizer can be made over the shards. Throws ConfigError when the collective of the
  // model's device cannot reduce-scatter.
  FsdpStrategy(Model& model, Collectives& collectives, const FsdpOptions& options, std::ostream& log);
  ~FsdpStrategy() override;

  const char* name() const override { return "fsdp"; }
  at::Tensor forward(const at::Tensor& inputs) override;
  at::Tensor evaluate(const at::Tensor& inputs) override;
  TensorMap forward_fields(const TensorMap& batch) override;
  TensorMap evaluate_fields(const TensorMap& batch) override;
  void before_evaluation() override;
  void evaluation_passes(std::int64_t passes) override;
  void after_evaluation() override;
  void backward(const std::function<void()>& backward) override;
  void backward_unsynced(const std::function<void()>& backward) override;

  SteppedParameters stepped_parameters(const std::vector<at::Tensor>& model_parameters) const override;
  void after_optimizer_step() override;
  at::Tensor gradient_norm(const std::vector<at::Tensor>& gradients) override;
  void save_through(torch::optim::Optimizer& optimizer,
                    const std::function<void(torch::optim::Optimizer&)>& write) override;
  void load_through(torch::optim::Optimizer& optimizer,
                    const std::function<void(torch::optim::Optimizer&)>& read) override;
  std::optional<ShardingFigures> sharding() const override;

  // UnitRunner: unit `unit`'s forward with its parameters gathered (and, in training, the
  // autograd hooks that gather it again for backward and sum its gradients after).
  at::Tensor run(std::size_t unit, const at::Tensor& input, const UnitForward& forward) override;

  // The autograd hooks' side (fsdp_strategy.cpp): before and after unit `unit`'s backward.
  void before_unit_backward(std::size_t unit);
  void after_unit_backward(std::size_t unit);

 private:
  void gather(std::size_t unit);    // gathered when it returns
  void prefetch(std::size_t unit);  // gathering started
  void release(std::size_t unit);
  void sum_gradients(std::size_t unit);
  void before_forward();
  void finish_backward(bool synced);
  void note_gathered();

  void share_buffers();
  at::Tensor cast_input(const at::Tensor& t) const;
  at::Tensor cast_output(const at::Tensor& t) const;
  TensorMap cast_fields(const TensorMap& fields, bool in) const;
  // Checkpoints: the parameters pointed at host copies of the float32 weights meanwhile, and
  // back at their full buffers after (given `values`, copied into them first).
  std::vector<at::Tensor> point_parameters_at_host_copies();
  void point_parameters_back(const std::vector<at::Tensor>& values);
  bool releases_parameters() const { return options_.level == ShardLevel::full; }

  Model& model_;
  FsdpOptions options_;
  UnitLayout layout_;
  std::vector<std::unique_ptr<ShardedUnit>> units_;  // as layout_.units: the declared ones, then the root
  std::vector<at::Tensor> buffers_;
  ShardedUnit* reducing_ = nullptr;  // the unit whose gradient sum was started last
  std::int64_t missing_passes_ = 0;  // this evaluation's: other ranks make this many more
  bool syncing_ = true;              // this backward sums the gradients (the last micro-batch's)
  std::int64_t peak_gathered_bytes_ = 0;
};

}  // namespace plugtrain
