#include "run/step_bench.h"

#include <algorithm>
#include <sstream>

#include "plugins/cpu_fallbacks.h"
#include "run/plan.h"
#include "run/trial_steps.h"
#include "run/validate.h"
#include "util/text.h"

namespace plugtrain {

namespace {

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double position = q * double(v.size() - 1);
  const std::size_t below = std::size_t(position);
  const std::size_t above = std::min(below + 1, v.size() - 1);
  return v[below] + (position - double(below)) * (v[above] - v[below]);
}

}  // namespace

BenchRow bench_backend(const ValidatedRun& run, const std::string& backend, std::int64_t batch_size,
                       const BenchSettings& settings, const SelectionLimits& limits) {
  const Experiment& e = run.experiment;
  BenchRow row;
  row.backend = backend;
  row.batch_size = batch_size;
  try {
    Experiment named = e;
    named.backend.name = backend;
    BackendHandle& handle = *select_backend(*run.host, named, limits).backend;  // the checks of naming it
    if (batch_size <= 0)
      batch_size =
          e.data.batch_size.value_or(std::clamp<std::int64_t>(32, e.data.min_batch_size, e.data.max_batch_size));
    TrialSteps trial(run, trial_plan(run, handle, /*device=*/0, batch_size, /*graphs=*/true));
    row.device = trial.plan().device.str();
    row.batch_size = trial.plan().batch.loader;
    trial.time(settings.warmup_steps);
    const FallbackCounts before = handle.runtime_counts(true).cpu_fallbacks;
    const std::vector<double> seconds = trial.time(settings.steps, 0, settings.synchronise_each_step);
    row.cpu_fallbacks = fallbacks_between(before, handle.runtime_counts(true).cpu_fallbacks);
    const double median = percentile(seconds, 0.5);
    row.step_ms_median = 1000 * median;
    row.step_ms_p10 = 1000 * percentile(seconds, 0.1);
    row.step_ms_p90 = 1000 * percentile(seconds, 0.9);
    row.samples_per_second = median > 0 ? double(row.batch_size) / median : 0;
    try {
      row.peak_memory_bytes = handle.memory(trial.device()).process_peak_bytes;
    } catch (const std::exception&) {
      // A backend that cannot say: the row shows no memory figure (peak_memory_bytes stays empty).
    }
  } catch (const std::exception& error) { row.error = first_line(error.what()); }
  return row;
}

}  // namespace plugtrain
