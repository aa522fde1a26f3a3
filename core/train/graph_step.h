// A training step recorded once as a device graph and replayed (train.graphs): on CUDA a
// CUDA graph, so one step costs one launch instead of hundreds, and the host does nothing per
// kernel. The backend records and replays (Backend::make_graph_capture, SDK 3.3); the host
// names no device.
//
// How a run goes through it: every batch of the full batch size is copied into static input
// and target tensors (with data.on_device, only its samples' places: the recording gathers the
// batch itself, data::Batch::deferred); the first `warm_up_steps` of them run the ordinary step eagerly the way
// the capture will record it (side stream; the fused optimizer builds its lists and state);
// the next one is recorded and then replayed, and so is every later one. A batch of another
// size (the last, partial batch of an epoch, or a batch halved after running out of memory)
// runs eagerly, and the recording stays valid. Before each replay the learning rate is
// written into the optimizer's device tensor; after it the host step counts are advanced, so
// checkpoints, resume and the schedule are the same as without graphs. The loss and logits
// of a replay are the recording's output tensors, valid until the next replay.
//
// ddp (several processes): c10d's reducer runs host code in every backward, so the step is two
// recordings — forward and backward through TrainingStrategy::model_forward (reducer not armed),
// then the optimizer step — with rank 0's buffers shared before the first and the gradients
// all-reduced in one call between them, both eagerly (TrainingStrategy::before_unsynced_forward,
// average_gradients).
//
// fp16: from the recording on, Precision decides skips on the device (skip_on_device): the
// overflow check is not read back, the fused kernel skips by its found_inf, and the host step
// counts are read back from the device before a checkpoint.
//
// Accumulation (train.accumulate_steps = N, one process): a group of N full micro-batches is one
// recording (the gradients zeroed, N forward and backward passes, the optimizer step): the
// micro-batches are copied into N static inputs as they come and the last one replays the
// group; their outputs are the recording's (TrainStep::recorded_micro_output). A group with the
// epoch's partial batch runs eagerly. With several processes an accumulated step runs eagerly.
//
// A recording the device refuses (a model that waits for the host in its forward, say) is a
// GraphCaptureError; with train.graphs = "auto" the run says why and goes on eagerly.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "plugtrain/backend.h"
#include "train/train_step.h"
#include "util/error.h"
#include "util/result.h"

namespace plugtrain {

class ReplayableOptimizer;

class GraphCaptureError : public Error {
 public:
  explicit GraphCaptureError(const std::string& message) : Error(message) {}
};

// Whether a run replays its steps from a graph, and why (not).
struct GraphDecision {
  bool use = false;
  std::string why;       // one line for the log: what decided it
  bool mention = false;  // worth a log line: the backend records graphs, or train.graphs = true asked
};

// What decides it; every field but `setting` only matters when graphs could be used.
struct GraphConditions {
  std::optional<bool> setting;           // train.graphs; nullopt: "auto"
  Status backend_records;                // whether the backend records graphs on the device, or why not
  int replicas = 1;                      // dp: models in this process
  int processes = 1;                     // ddp: processes (the step is then recorded in two parts)
  bool skip_nonfinite = false;           // train.on_nonfinite = "skip_step"
  Status optimizer_replayable;           // whether the optimizer's step can be replayed, or why not
  Status loss_replayable;                // whether the task's loss can be recorded, or why not
  Status fixed_batches;                  // whether batches are tensors of fixed shapes only, or why not (named fields)
  Status recipe;                         // whether the recipe steps as recordings, or why not (mixup; accumulation under ddp)
  std::int64_t accumulate_steps = 1;     // train.accumulate_steps: micro-batches in one recorded step
};

// "auto" uses graphs when nothing stands in the way; true then fails with the first reason
// (a ConfigError-like Error naming train.graphs); false never uses them.
GraphDecision decide_graphs(const GraphConditions& conditions);

class GraphStep : public TrainStep {
 public:
  // `capture` records and replays; `optimizer` must be `replayable` (fused_optimizers.h).
  // `fall_back_on_failure`: train.graphs = "auto" (a refused capture goes on eagerly).
  // `second`: with several processes (ddp), the recorder of the optimizer step, which is
  // replayed after the gradients are averaged eagerly (c10d's reducer runs host code in every
  // backward, so it cannot be inside a recording; the strategy all-reduces them in one call).
  GraphStep(TrainingStrategy& strategy, Precision& precision, torch::optim::Optimizer& optimizer, const Task& task,
            ReplayableOptimizer& replayable, std::vector<at::Tensor> parameters, double grad_clip,
            std::unique_ptr<GraphCapture> capture, bool fall_back_on_failure, int warm_up_steps = 3,
            std::unique_ptr<GraphCapture> second = nullptr);
  ~GraphStep() override;

  StepOutput run(const data::Batch& batch, double lr, PhaseTimer* timer = nullptr) override;
  StepOutput run_micro(const data::Batch& batch, double lr, const MicroStep& micro, PhaseTimer* timer = nullptr) override;
  const StepOutput& recorded_micro_output(int index) const override;
  // A whole recorded step adds its figures to the running sums inside its recording, so the
  // task's statistics and the adds are no launches of their own outside it each step.
  void count_with(StepCounter counter) override { counter_ = std::move(counter); }
  // Replays gather a deferred batch (data.on_device) inside the recording: only its places are
  // copied in before each, so the gather, the conversion and the normalisation are no launches
  // of their own. (A recorded accumulation group gathers its micro-batches as they come.)
  bool gathers_in_recording() const override { return capture_ != nullptr; }

  std::int64_t replays() const { return replays_; }
  // Empty while graphs are in use; why they stopped being used otherwise.
  const std::string& fallback_reason() const { return fallback_reason_; }

 private:
  StepOutput run_recorded(const data::Batch& batch, double lr);
  StepOutput run_micro_recorded(const data::Batch& batch, double lr, const MicroStep& micro, PhaseTimer* timer);
  // Inside the recorded work, after the step: its figures into the running sums (count_with).
  void count_recorded_step();
  // A warm-up step, the recording, or a replay of `work` (with several processes, `second_work`
  // after the gradients are averaged). False: the device refused the recording and "auto" goes
  // on eagerly; nothing of `work` ran.
  bool step_recorded(const std::function<void()>& work, const std::function<void()>& second_work);
  void warm_up(const std::function<void()>& work, const std::function<void()>& second_work);
  // Records `work` (and `second_work`); false when the device refused and "auto" goes on eagerly.
  bool record(const std::function<void()>& work, const std::function<void()>& second_work);
  // Replays the recording(s) and counts the optimizer's host steps on by one.
  void replay(bool split);

  ReplayableOptimizer& replayable_;
  std::unique_ptr<GraphCapture> capture_, second_;
  std::vector<at::Tensor> recorded_grads_;  // split: the gradients the first recording writes
  bool fall_back_on_failure_;
  int warm_up_steps_;
  int warmed_up_ = 0;
  bool captured_ = false;
  std::int64_t recorded_layout_ = -1;  // the optimizer's layout() the recording points into
  std::int64_t replays_ = 0;
  std::string fallback_reason_;
  double lr_ = 0;             // this step's learning rate (written to the device before a replay)
  data::Batch static_batch_;  // what the recording reads: a batch, or a deferred batch's places
  StepOutput static_out_;     // what it writes
  StepCounter counter_;       // may be empty: the epoch loop counts every step
  // Accumulation: the group's micro-batches, recorded as one step, and their outputs.
  bool group_recorded_ = false;  // the group under way is gathered for a recorded step
  std::vector<data::Batch> static_group_;
  std::vector<StepOutput> static_group_out_;
};

}  // namespace plugtrain
