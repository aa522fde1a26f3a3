// The running sums of one epoch's training figures: the loss, the task's training statistics and
// the samples seen. They stay on the device: reading them every step would synchronise it.
//
// With accumulation (train.accumulate_steps) a step's parts wait in pending sums until its
// optimizer step is taken, so a step that train.on_nonfinite = "skip_step" drops counts nothing.
// A recorded accumulated step (graph_step.h) runs all its micro-batches at the last one: the
// parts before it are counted then, from the recording's outputs.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <ATen/core/Tensor.h>

#include "task/task.h"
#include "train/device_context.h"
#include "train/loop_state.h"

namespace plugtrain {

class TrainStep;
struct StepOutput;

class RunningSums {
 public:
  // `carried`: the sums of an interrupted epoch, which this process carries on with (or null).
  // `accumulate`: the run accumulates micro-batches (pending sums are kept). `check_loss`, when
  // set, sees every part's loss as it is added (read from the device: the host CPU's only).
  RunningSums(const Task& task, const DeviceContext& device, const EpochSums* carried, bool accumulate,
              std::function<void(double loss)> check_loss = {});

  // A part's loss and statistics: into the totals, or (pending) into its step's pending sums.
  void add(const StepOutput& out, const at::Tensor& counted, std::int64_t size, bool pending);
  // A part of a recorded step, whose outputs exist once the step has run (take_step reads them).
  void add_recorded(int micro, const at::Tensor& counted, std::int64_t size);
  // The step was taken: its pending and recorded parts join the totals.
  void take_step(const TrainStep& step);
  // The step was skipped: its parts count nothing.
  void drop_step();

  std::int64_t seen() const { return seen_; }
  // This process's {loss sum, samples seen, statistics...}, read from the device.
  std::vector<double> local() const;

 private:
  struct RecordedPart {
    at::Tensor counted;
    std::int64_t size = 0;
    int micro = 0;
  };

  const Task& task_;
  std::function<void(double)> check_loss_;
  std::int64_t statistics_size_;
  at::Tensor loss_, statistics_;                  // the totals
  at::Tensor pending_loss_, pending_statistics_;  // the step in progress (with accumulation)
  std::int64_t seen_ = 0, pending_seen_ = 0;
  std::vector<RecordedPart> recorded_;
};

}  // namespace plugtrain
