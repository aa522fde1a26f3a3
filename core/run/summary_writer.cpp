#include "run/summary_writer.h"

#include <cstdio>
#include <ostream>

#include <nlohmann/json.hpp>

#include "util/atomic_file.h"
#include "version.h"

namespace plugtrain {

namespace {

nlohmann::json memory_json(const MemoryInfo& m) {
  auto bytes = [](const std::optional<std::uint64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return {{"total_bytes", bytes(m.total_bytes)},       {"free_bytes", bytes(m.free_bytes)},
          {"used_bytes", bytes(m.process_used_bytes)}, {"peak_bytes", bytes(m.process_peak_bytes)},
          {"reserved_bytes", bytes(m.reserved_bytes)}, {"oom_events", bytes(m.oom_events)},
          {"note", m.note}};
}

// Out-of-memory errors that halved the batch (train/epoch_loop.cpp).
nlohmann::json halvings_json(const std::vector<BatchHalving>& halvings) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& h : halvings)
    rows.push_back({{"epoch", h.epoch}, {"step", h.step}, {"from", h.from}, {"to", h.to},
                    {"lr_before", h.lr_before}, {"lr_after", h.lr_after}, {"error", h.error}});
  return rows;
}

nlohmann::json summary_json(const Experiment& e, const RunResult& r, std::int64_t parameters) {
  nlohmann::json epochs = nlohmann::json::array();
  for (const auto& m : r.summary.epochs) {
    nlohmann::json row = {{"epoch", m.epoch},
                          {"train_loss", m.train_loss},
                          {"train_accuracy", m.train_accuracy},
                          {"samples", m.samples},
                          {"samples_per_second", m.samples_per_second},
                          {"seconds", m.seconds},
                          {"lr", m.lr}};
    row["test_loss"] = m.test_loss ? nlohmann::json(*m.test_loss) : nlohmann::json(nullptr);
    row["test_accuracy"] = m.test_accuracy ? nlohmann::json(*m.test_accuracy) : nlohmann::json(nullptr);
    row["memory"] = memory_json(m.memory);
    if (m.phases.timed_steps > 0) {
      nlohmann::json phases = {{"timed_steps", m.phases.timed_steps}};
      for (int p = 0; p < kPhases; ++p) {
        const Phase phase = Phase(p);
        phases[to_string(phase)] = {{"seconds", m.phases.seconds[p]}, {"share", m.phases.share(phase)}};
      }
      row["phases"] = phases;
    }
    epochs.push_back(row);
  }
  return {{"experiment", e.name},
          {"source", e.source},
          {"model", e.model},
          {"parameters", parameters},
          {"dataset", e.dataset},
          {"backend", r.backend},
          {"device", r.device},
          {"seed", e.seed},
          {"steps", r.summary.steps},
          {"interrupted", r.summary.interrupted},
          {"stopped_early", r.summary.stopped_early},
          {"precision", e.precision},
          {"skipped_steps", r.summary.skipped_steps},
          {"step_batch", r.summary.step_batch},
          {"nonfinite_skipped_steps", r.summary.nonfinite_skipped_steps},
          {"batch_halvings", halvings_json(r.summary.halvings)},
          {"best_test_accuracy", r.summary.best_test_accuracy},
          {"best_epoch", r.summary.best_epoch},
          {"final_test_accuracy", r.summary.final_test_accuracy},
          {"final_test_loss", r.summary.final_test_loss},
          {"total_seconds", r.summary.total_seconds},
          {"samples_per_second", r.summary.samples_per_second},
          {"plugtrain", PLUGTRAIN_VERSION},
          {"world_size", r.world_size},
          {"epochs", epochs}};
}

}  // namespace

void write_summary(const Experiment& e, RunResult& result, std::int64_t parameters, RunOutputs& outputs) {
  std::ostream& log = outputs.log;
  result.summary_file = outputs.run_folder / "summary.json";
  write_file_atomically(result.summary_file, summary_json(e, result, parameters).dump(2) + "\n");
  const TrainSummary& s = result.summary;
  if (s.interrupted) {
    log << "interrupted (" << s.stop_reason << ")"
        << (outputs.checkpoints.empty() ? std::string(": no checkpoint written (checkpoint.save = \"none\")")
                                        : ": checkpoint " + (outputs.checkpoints / "last.ckpt").string() +
                                              "\nresume with: plugtrain run " + e.source + " --resume last")
        << "\n";
    return;
  }
  if (s.stopped_early) log << s.stop_reason << "\n";
  char line[256];
  std::snprintf(line, sizeof line,
                "done: final test accuracy %.4f (best %.4f at epoch %lld), %.1f s, %.0f samples/s on %s\n",
                s.final_test_accuracy, s.best_test_accuracy, static_cast<long long>(s.best_epoch), s.total_seconds,
                s.samples_per_second, result.device.c_str());
  log << line << "summary: " << result.summary_file.string() << "\n";
}

}  // namespace plugtrain
