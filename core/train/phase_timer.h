// Where a training step's time goes, always on and nearly free: waiting for data, copying it
// to the device, forward, backward, optimizer, and the rest (metrics, callbacks). On the host
// CPU every step is timed with the clock alone. On an accelerator, whose work runs behind the
// host's back, one step in `sample_every` is timed with the device synchronised at each phase
// boundary, so the figures are the device's and the other steps pay nothing: the epoch loop
// samples the steps that end a log interval, whose loss is read (and waited for) anyway.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string>

#include <c10/core/Device.h>

namespace plugtrain {

enum class Phase { data, copy, forward, backward, optimizer, other };
inline constexpr int kPhases = 6;
const char* to_string(Phase phase);  // "data", "copy", "fwd", "bwd", "opt", "other"

struct PhaseTimes {
  std::array<double, kPhases> seconds{};  // summed over the timed steps
  std::int64_t timed_steps = 0;
  double total() const;
  double share(Phase phase) const;  // of the timed steps' time, 0..1
  // "data 2% copy 0% fwd 31% bwd 55% opt 9% other 3%"; empty when no step was timed.
  std::string text() const;
};

class PhaseTimer {
 public:
  PhaseTimer(c10::Device device, bool enabled, std::int64_t sample_every = 16);

  // Before the step waits for its batch; `step`: the optimizer steps done before it. On an
  // accelerator the step after which step + 1 is a multiple of sample_every is timed.
  void start_step(std::int64_t step);
  bool timing() const { return timing_; }  // this step is timed (on an accelerator: synchronised)
  void mark(Phase finished);           // `finished` has just ended; the next one starts
  void add(Phase phase, double seconds, Phase from);  // moves time measured inside `from` to `phase`
  void end_step();                     // what was not marked is `other`
  PhaseTimes take();                   // the figures so far, and starts again

 private:
  void synchronize() const;
  using Clock = std::chrono::steady_clock;
  c10::Device device_;
  bool enabled_, synchronous_;
  std::int64_t sample_every_;
  bool timing_ = false;
  Clock::time_point last_;
  PhaseTimes times_;
};

}  // namespace plugtrain
