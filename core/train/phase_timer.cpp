#include "train/phase_timer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <c10/core/impl/VirtualGuardImpl.h>

namespace plugtrain {

const char* to_string(Phase phase) {
  switch (phase) {
    case Phase::data: return "data";
    case Phase::copy: return "copy";
    case Phase::forward: return "fwd";
    case Phase::backward: return "bwd";
    case Phase::optimizer: return "opt";
    case Phase::other: return "other";
  }
  return "other";
}

double PhaseTimes::total() const {
  double t = 0;
  for (double s : seconds) t += s;
  return t;
}

double PhaseTimes::share(Phase phase) const {
  const double t = total();
  return t > 0 ? seconds[static_cast<int>(phase)] / t : 0;
}

std::string PhaseTimes::text() const {
  if (timed_steps == 0) return "";
  std::string out;
  for (int p = 0; p < kPhases; ++p) {
    char part[32];
    std::snprintf(part, sizeof part, "%s%s %.0f%%", p ? " " : "", to_string(Phase(p)), 100 * share(Phase(p)));
    out += part;
  }
  return out;
}

PhaseTimer::PhaseTimer(c10::Device device, bool enabled, std::int64_t sample_every)
    : device_(device), enabled_(enabled), synchronous_(device.is_cpu()), sample_every_(std::max<std::int64_t>(1, sample_every)) {}

void PhaseTimer::synchronize() const {
  if (!synchronous_) c10::impl::VirtualGuardImpl(device_.type()).synchronizeDevice(device_.index() < 0 ? 0 : device_.index());
}

void PhaseTimer::start_step(std::int64_t step) {
  timing_ = enabled_ && (synchronous_ || (step + 1) % sample_every_ == 0);
  if (!timing_) return;
  synchronize();  // the previous steps' device work is not this step's
  last_ = Clock::now();
}

void PhaseTimer::mark(Phase finished) {
  if (!timing_) return;
  synchronize();
  const auto now = Clock::now();
  times_.seconds[static_cast<int>(finished)] += std::chrono::duration<double>(now - last_).count();
  last_ = now;
}

void PhaseTimer::add(Phase phase, double seconds, Phase from) {
  if (!timing_) return;
  const double moved = std::min(seconds, times_.seconds[static_cast<int>(from)]);
  times_.seconds[static_cast<int>(from)] -= moved;
  times_.seconds[static_cast<int>(phase)] += moved;
}

void PhaseTimer::end_step() {
  if (!timing_) return;
  mark(Phase::other);
  ++times_.timed_steps;
  timing_ = false;
}

PhaseTimes PhaseTimer::take() {
  PhaseTimes t = times_;
  times_ = {};
  return t;
}

}  // namespace plugtrain
