// Timing a few training steps of an experiment's own model, batch and precision on one
// backend: warm-up, then N timed steps (each ended by a device synchronisation). What
// `plugtrain bench` prints, and what fastest-backend selection compares: trial steps
// (run/trial_steps.h) of the one validated run; no run folder is made.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "select/backend_selection.h"

namespace plugtrain {

struct BenchSettings {
  std::int64_t warmup_steps = 5;
  std::int64_t steps = 30;
  bool synchronise_each_step = true;  // false: one synchronisation after the steps, mean time (Trainer::time_steps)
};

struct BenchRow {
  std::string backend, device;
  std::int64_t batch_size = 0;
  double samples_per_second = 0;  // batch / median step time
  double step_ms_median = 0, step_ms_p10 = 0, step_ms_p90 = 0;
  std::optional<std::uint64_t> peak_memory_bytes;  // the backend's figure after the steps
  std::string error;  // non-empty: this backend could not run the steps (one line)
  std::map<std::string, std::uint64_t> cpu_fallbacks;  // operators run on the CPU in the timed steps
};

struct ValidatedRun;

// `backend` (usable, and not excluded by `limits`) on its first device, `batch_size` samples a
// step (0: the experiment's data.batch_size; with "auto", 32 within data.min_batch_size and
// data.max_batch_size). A backend that cannot run the steps gives a row with its error.
BenchRow bench_backend(const ValidatedRun& run, const std::string& backend, std::int64_t batch_size,
                       const BenchSettings& settings, const SelectionLimits& limits = {});

}  // namespace plugtrain
