// Timed training steps of a built run, and nothing else (no evaluation, no callbacks, no
// checkpoint): what `bench`, the fastest-backend selection, the batch-size search and the
// benchmarks time. The timer keeps its loader and its step between calls, as a run keeps them
// between steps, so a benchmark that times one step per round (rows alternating) times a warm
// step, not a new loader's first batch and a new step's first use.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace plugtrain {

namespace data {
class BatchLoader;
}
class TrainStep;

class StepTimer {
 public:
  // Trainer::step_timer builds one; `lr` is the run's base learning rate.
  StepTimer(std::unique_ptr<data::BatchLoader> loader, std::unique_ptr<TrainStep> step, double lr, c10::Device device);
  ~StepTimer();
  StepTimer(const StepTimer&) = delete;
  StepTimer& operator=(const StepTimer&) = delete;

  // `steps` more training steps (a short data set starts its next epoch), each ended by a device
  // synchronisation; their wall times, in seconds. `synchronise_each = false`: one
  // synchronisation after the last step, and every step's time is the mean (throughput as a run
  // sees it, with the device's queue never drained between steps).
  std::vector<double> time(std::int64_t steps, bool synchronise_each = true);

 private:
  void synchronise() const;
  std::unique_ptr<data::BatchLoader> loader_;
  std::unique_ptr<TrainStep> step_;
  double lr_;
  c10::Device device_;
  std::int64_t epoch_ = 0;
};

}  // namespace plugtrain
