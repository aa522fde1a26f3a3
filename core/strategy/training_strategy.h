// How one training step is spread over devices and processes (Lightning's Strategy): a single
// device, dp (replicas in one process) or ddp (one process per device). The loop calls these
// and nothing else about devices or processes; a single-device run is a world of one whose
// operations do nothing, so the loop has no special cases.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "data/batch_loader.h"
#include "plugtrain/model.h"

namespace torch::optim {
class Optimizer;
}

namespace plugtrain {

// What the optimizer steps: the model's parameters, or (fsdp) this rank's flat shards of them;
// for each, whether it holds matrices (optim.decay = "matrices" decays only those).
// What summary.json says of a sharded run: the level, the units, and the most parameter bytes
// gathered at once.
struct ShardingFigures {
  std::string shard;  // optimizer, gradients, full
  std::int64_t units = 0;
  std::int64_t largest_unit_bytes = 0;  // of the declared units
  std::int64_t root_bytes = 0;
  std::int64_t peak_gathered_bytes = 0;
};

struct SteppedParameters {
  std::vector<at::Tensor> tensors;
  std::vector<bool> matrices;
};

class TrainingStrategy {
 public:
  virtual ~TrainingStrategy() = default;

  virtual const char* name() const = 0;

  // Once the model's weights are final (after [model] init and a resume): ddp copies rank 0's
  // weights and buffers to every rank and hooks gradient averaging into backward.
  virtual void prepare() {}

  // The forward pass over this process's batch, in training (dp splits it over the replicas;
  // ddp takes rank 0's buffers first).
  virtual at::Tensor forward(const at::Tensor& inputs) = 0;
  // The same in evaluation, after before_evaluation().
  virtual at::Tensor evaluate(const at::Tensor& inputs) = 0;
  virtual void before_evaluation() {}
  // Before the evaluation's batches: this process will make `passes` forward passes; and after
  // them, before the figures are summed: by its return every process has made as many (fsdp's
  // gathers are collectives: a process with fewer batches makes passes that only gather).
  virtual void evaluation_passes(std::int64_t passes) { (void)passes; }
  virtual void after_evaluation() {}
  // The same for a batch with named fields (Model::forward_batch): the model's named
  // outputs. dp splits only the input over its replicas: validation refuses it such data first.
  virtual TensorMap forward_fields(const TensorMap& batch) = 0;
  virtual TensorMap evaluate_fields(const TensorMap& batch) = 0;

  // The model's outputs for a batch with fields, in training or in evaluation: its
  // forward_batch of the fields and "input"; "output" is taken out into `output`, the rest
  // returned. Throws Error when the model gives no "output" or output_lengths of another shape.
  TensorMap outputs(const data::Batch& batch, bool training, at::Tensor& output);

  // Runs `backward` (the precision's) so that the model's gradients afterwards are those of
  // the whole step: dp sums the replicas' into the model's; ddp all-reduces them in buckets
  // while backward runs.
  virtual void backward(const std::function<void()>& backward) = 0;
  // The same without averaging over processes (a micro-batch before the last of an
  // accumulated step: ddp's no_sync); the gradients add up in the model's.
  virtual void backward_unsynced(const std::function<void()>& backward) { backward(); }

  // A step replayed from recordings (train/graph_step.h) cannot hold what talks to the other
  // processes: with more than one, it runs forward and backward through model_forward() (no
  // gradient sync), and these do eagerly, around the recordings, what forward() and
  // backward() do inside an eager step. A world of one: nothing.
  virtual at::Tensor model_forward(const at::Tensor& inputs) { return forward(inputs); }
  virtual void before_unsynced_forward() {}
  virtual void average_gradients(const std::vector<at::Tensor>& parameters) { (void)parameters; }

  // What the optimizer steps (the model's parameters unless the strategy shards them).
  virtual SteppedParameters stepped_parameters(const std::vector<at::Tensor>& model_parameters) const;
  // After each optimizer step (fsdp: the updated shards to the parameters kept whole).
  virtual void after_optimizer_step() {}
  // The norm of the step's whole gradient, from the gradients of the stepped parameters (fsdp:
  // this rank's shards, so the squares are summed over the ranks). On the device, not read.
  virtual at::Tensor gradient_norm(const std::vector<at::Tensor>& gradients);
  // Saving and loading a checkpoint sees the model whole and an optimizer of its parameters,
  // as a run of one process has (fsdp gathers them from the shards, and every rank takes part;
  // `write` runs on rank 0 only).
  virtual void save_through(torch::optim::Optimizer& optimizer,
                            const std::function<void(torch::optim::Optimizer&)>& write) {
    write(optimizer);
  }
  virtual void load_through(torch::optim::Optimizer& optimizer,
                            const std::function<void(torch::optim::Optimizer&)>& read) {
    read(optimizer);
  }
  // fsdp's units and what was gathered at once; nullopt where the model is kept whole.
  virtual std::optional<ShardingFigures> sharding() const { return std::nullopt; }

  // Element-wise sums of per-process figures over all processes (a world of one: unchanged).
  virtual std::vector<double> sum(std::vector<double> values) = 0;
  // Whether the processes should be asked about stopping after `step` (asking is a collective).
  virtual bool stop_question_due(std::int64_t step) const = 0;
  // True when any process wants to stop: every process stops at the same step.
  virtual bool agree_to_stop(bool this_process_wants) = 0;
  // This process has reached `step` (ddp: so a failure can name the rank that hung).
  virtual void note_step(std::int64_t) {}

  // Which part of the data this process reads (pad: every process gets the same count).
  virtual data::Shard shard(bool pad) const = 0;
  virtual bool is_rank_zero() const = 0;
  virtual int processes() const = 0;
};

}  // namespace plugtrain
