// Timing a few training steps of an experiment's own model, batch and precision on one
// backend: warm-up, then N timed steps (each ended by a device synchronisation). What
// `plugtrain bench` prints, and what fastest-backend selection compares. A run is planned and
// built with the run's own stages; no run folder is made.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "run/run_request.h"

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

// `request`: the experiment and its --set overrides; `backend` and `batch_size` are set on top.
BenchRow bench_backend(const RunRequest& request, const std::string& backend, std::int64_t batch_size,
                       const BenchSettings& settings);

}  // namespace plugtrain
