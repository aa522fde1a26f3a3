// An epoch's training loss and task statistics (task/task.h), summed on the device: reading
// them every step would synchronise it. They are read once, by totals(), at the end of the epoch
// or where an interrupt stops it. With accumulation a group's figures wait as pending until its
// optimizer step is taken: a skipped step (train.on_nonfinite = "skip_step") counts nothing.
// A step replayed from a recorded device graph (graph_step.h) adds its figures inside the
// recording (add_on_device), so the sums live in tensors the epoch loop keeps for the whole run
// (SumTensors): the recording adds into the same memory every epoch.
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

#include "task/task.h"
#include "train/device_context.h"
#include "train/loop_state.h"

namespace plugtrain {

class TrainingStrategy;
struct StepOutput;

// What totals() reads: over all processes.
struct SummedFigures {
  double loss_sum = 0, seen = 0;
  std::vector<double> statistics;
};

// Where the sums live: made by the first epoch, reset in place by each later one.
struct SumTensors {
  at::Tensor loss_sum, statistics;
  at::Tensor pending_loss, pending_statistics;  // accumulation only
};

class RunningSums {
 public:
  // `carried`: an interrupted epoch's sums, already over all processes, which one process
  // (`carries_them`) starts from when the epoch resumes. `accumulates`: groups are counted as
  // pending (train.accumulate_steps > 1). `tensors` are set to the epoch's starting sums.
  RunningSums(const Task& task, const DeviceContext& device, const EpochSums& carried, bool carries_them,
              bool accumulates, SumTensors& tensors);

  // A part of a step (`size` samples, its hard targets `counted`) into the epoch's sums, or into
  // the pending group's: add_on_device (unless `out` says its recording did: StepOutput::counted)
  // and add_seen.
  void count(const StepOutput& out, const at::Tensor& counted, std::int64_t size, bool pending);
  // Its device part alone: what a recorded step runs inside its recording.
  void add_on_device(const StepOutput& out, const at::Tensor& counted, std::int64_t size, bool pending);
  // Its host part alone.
  void add_seen(std::int64_t size, bool pending) { (pending ? pending_seen_ : seen_) += size; }
  void commit_pending();  // the group's optimizer step was taken
  void drop_pending();    // it was skipped
  // Samples counted into the epoch since this object began (the carried ones not included).
  std::int64_t seen_here() const { return seen_ - carried_seen_; }
  // The sums over every process: one read of the device and the strategy's sum.
  SummedFigures totals(TrainingStrategy& strategy) const;

 private:
  const Task& task_;
  std::int64_t statistics_size_;
  at::Tensor &loss_sum_, &statistics_;
  std::int64_t seen_ = 0, carried_seen_ = 0;
  at::Tensor &pending_loss_, &pending_statistics_;
  std::int64_t pending_seen_ = 0;
};

}  // namespace plugtrain
