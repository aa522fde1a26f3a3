#include "run/step_bench.h"

#include <algorithm>
#include <sstream>

#include "plugins/cpu_fallbacks.h"
#include "run/build.h"
#include "run/plan.h"
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

BenchRow bench_backend(const RunRequest& request, const std::string& backend, std::int64_t batch_size,
                       const BenchSettings& settings) {
  BenchRow row;
  row.backend = backend;
  row.batch_size = batch_size;
  try {
    RunRequest r = request;
    r.overrides.push_back("backend.name=\"" + backend + "\"");
    r.overrides.push_back("backend.devices=1");
    if (batch_size > 0) r.overrides.push_back("data.batch_size=" + std::to_string(batch_size));
    ValidatedRun run = validate(r);
    const RunPlan plan = plan_run(run, {r.host_cpu_only, r.disable_backends}, std::nullopt);
    row.device = plan.device.str();
    row.batch_size = plan.batch.loader;
    std::ostringstream quiet;
    std::unique_ptr<BuiltRun> built = build_run(run, plan, nullptr, nullptr, quiet);
    built->trainer->time_steps(settings.warmup_steps);
    const FallbackCounts before = plan.choice.backend->cpu_fallback_counts();
    const std::vector<double> seconds =
        built->trainer->time_steps(settings.steps, 0, settings.synchronise_each_step);
    row.cpu_fallbacks = fallbacks_between(before, plan.choice.backend->cpu_fallback_counts());
    const double median = percentile(seconds, 0.5);
    row.step_ms_median = 1000 * median;
    row.step_ms_p10 = 1000 * percentile(seconds, 0.1);
    row.step_ms_p90 = 1000 * percentile(seconds, 0.9);
    row.samples_per_second = median > 0 ? double(row.batch_size) / median : 0;
    try {
      row.peak_memory_bytes = plan.choice.backend->memory(plan.devices.devices.at(0)).process_peak_bytes;
    } catch (const std::exception&) {
      // A backend that cannot say: the row shows no memory figure (peak_memory_bytes stays empty).
    }
  } catch (const std::exception& e) {
    row.error = first_line(e.what());
  }
  return row;
}

}  // namespace plugtrain
