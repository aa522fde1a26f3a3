#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "run/step_bench.h"
#include "plugins/cpu_fallbacks.h"
#include "plugins/plugin_host.h"
#include "run/validate.h"
#include "select/backend_selection.h"
#include "util/error.h"
#include "util/format.h"
#include "util/text.h"

namespace plugtrain::cli {

namespace {

// The usable backends in automatic order (what `run` would try), unless --backends names them.
std::vector<std::string> backends_to_bench(const ValidatedRun& run, const std::vector<std::string>& named) {
  if (!named.empty()) return named;
  std::vector<std::string> usable;
  for (const std::string& name : automatic_order(*run.host, run.experiment)) {
    BackendHandle* b = run.host->backend(name);
    if (b && b->probe().usable()) usable.push_back(name);
  }
  return usable;
}

}  // namespace

void add_bench_command(CLI::App& app) {
  struct Args {
    RunRequest request;
    std::vector<std::string> backends;
    std::vector<std::int64_t> batch_sizes;
    BenchSettings settings;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Time training steps of an experiment's model, batch and precision on each usable backend");
  cmd->add_option("experiment", args->request.experiment_file, "Experiment file (TOML)")->required();
  cmd->add_option("--set", args->request.overrides, "Override a key (repeatable)");
  cmd->add_option("--backends", args->backends, "Backends to time (default: every usable one)")->delimiter(',');
  cmd->add_option("--batch-sizes", args->batch_sizes, "Batch sizes, one row each (default: the experiment's)")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  cmd->add_option("--steps", args->settings.steps, "Timed steps per row (after the warm-up)")
      ->check(CLI::PositiveNumber)
      ->default_val(30);
  cmd->add_option("--warmup", args->settings.warmup_steps, "Untimed steps first")->check(CLI::NonNegativeNumber)->default_val(5);
  cmd->add_flag("--json", args->json, "Print the same as JSON");
  add_plugin_path_option(*cmd, args->request.plugin_paths);
  cmd->callback([args] {
    ValidatedRun run = validate(args->request);  // once: every row times trial steps of this run
    const std::vector<std::string> backends = backends_to_bench(run, args->backends);
    std::vector<std::int64_t> batches = args->batch_sizes;
    if (batches.empty()) batches = {0};  // the experiment's own
    std::vector<BenchRow> rows;
    for (std::int64_t batch : batches)
      for (const std::string& b : backends) {
        if (!args->json) std::cerr << "bench: " << b << (batch ? ", batch " + std::to_string(batch) : "") << "...\n";
        rows.push_back(bench_backend(run, b, batch, args->settings));
      }
    // Speed relative to the CPU at the same batch size, where the CPU was timed.
    auto cpu_speed = [&](std::int64_t batch) -> double {
      for (const auto& r : rows)
        if (r.backend == "cpu" && r.batch_size == batch && r.error.empty()) return r.samples_per_second;
      return 0;
    };
    if (args->json) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& r : rows) {
        nlohmann::json j = {{"backend", r.backend}, {"device", r.device}, {"batch_size", r.batch_size}};
        if (!r.error.empty()) {
          j["error"] = r.error;
        } else {
          j["samples_per_second"] = r.samples_per_second;
          j["step_ms"] = {{"median", r.step_ms_median}, {"p10", r.step_ms_p10}, {"p90", r.step_ms_p90}};
          j["peak_memory_bytes"] = r.peak_memory_bytes ? nlohmann::json(*r.peak_memory_bytes) : nlohmann::json(nullptr);
          const double cpu = cpu_speed(r.batch_size);
          j["vs_cpu"] = cpu > 0 ? nlohmann::json(r.samples_per_second / cpu) : nlohmann::json(nullptr);
          j["cpu_fallbacks"] = r.cpu_fallbacks;
        }
        out.push_back(j);
      }
      std::cout << out.dump(2) << "\n";
      return;
    }
    std::printf("%-10s %-8s %6s %12s %26s %12s %8s\n", "BACKEND", "DEVICE", "BATCH", "SAMPLES/S",
                "STEP MS median (p10-p90)", "PEAK MEM", "VS CPU");
    for (const auto& r : rows) {
      if (!r.error.empty()) {
        std::printf("%-10s %-8s %6lld  failed: %s\n", r.backend.c_str(), r.device.c_str(), (long long)r.batch_size,
                    r.error.c_str());
        continue;
      }
      const double cpu = cpu_speed(r.batch_size);
      const std::string step = fixed(r.step_ms_median, 2) + " (" + fixed(r.step_ms_p10, 2) + "-" + fixed(r.step_ms_p90, 2) + ")";
      std::printf("%-10s %-8s %6lld %12.0f %26s %12s %8s\n", r.backend.c_str(), r.device.c_str(),
                  (long long)r.batch_size, r.samples_per_second, step.c_str(), format_bytes(r.peak_memory_bytes, "-").c_str(),
                  cpu > 0 ? (fixed(r.samples_per_second / cpu, 2) + "x").c_str() : "-");
    }
    // Below the table, so its columns stay aligned: what each backend ran on the CPU per timed run.
    for (const auto& r : rows)
      if (const std::string fallbacks = describe_fallbacks(r.cpu_fallbacks); !fallbacks.empty())
        std::printf("cpu fallback: %s, batch %lld: %s in %d steps\n", r.backend.c_str(), (long long)r.batch_size,
                    fallbacks.c_str(), (int)args->settings.steps);
    std::cout << std::flush;
    // Nothing could be timed: say so through the exit code too.
    if (std::none_of(rows.begin(), rows.end(), [](const BenchRow& r) { return r.error.empty(); }))
      set_exit_code(exit_failure);
  });
}

}  // namespace plugtrain::cli
