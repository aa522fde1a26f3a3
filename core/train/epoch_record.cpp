#include "train/epoch_record.h"

#include <nlohmann/json.hpp>

namespace plugtrain {

namespace {

nlohmann::json memory_json(const MemoryInfo& m) {
  auto bytes = [](const std::optional<std::uint64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return {{"total_bytes", bytes(m.total_bytes)},       {"free_bytes", bytes(m.free_bytes)},
          {"used_bytes", bytes(m.process_used_bytes)}, {"peak_bytes", bytes(m.process_peak_bytes)},
          {"reserved_bytes", bytes(m.reserved_bytes)}, {"oom_events", bytes(m.oom_events)},
          {"note", m.note}};
}

}  // namespace

nlohmann::json host_syncs_json(const HostSyncFigures& s) {
  if (!s.counted) return nullptr;
  return {{"per_step", s.per_step()}, {"steady_steps", s.steady_steps}, {"steady", s.steady},
          {"epoch", s.epoch},         {"evaluation", s.evaluation},     {"steady_causes", s.steady_causes}};
}

HostSyncFigures total_host_syncs(const std::vector<EpochMetrics>& epochs) {
  HostSyncFigures total;
  for (const EpochMetrics& m : epochs) {
    const HostSyncFigures& s = m.host_syncs;
    if (!s.counted) continue;
    total.counted = true;
    total.steady_steps += s.steady_steps;
    total.steady += s.steady;
    total.epoch += s.epoch;
    total.evaluation += s.evaluation;
    for (const auto& [cause, count] : s.steady_causes) total.steady_causes[cause] += count;
  }
  return total;
}

nlohmann::json epoch_json(const EpochMetrics& m) {
  nlohmann::json row = {{"epoch", m.epoch},
                        {"train_loss", m.train_loss},
                        {"samples", m.samples},
                        {"samples_per_second", m.samples_per_second},
                        {"seconds", m.seconds},
                        {"lr", m.lr}};
  for (const MetricValue& v : m.train) row["train_" + v.name] = v.value;
  row["test_loss"] = m.test_loss ? nlohmann::json(*m.test_loss) : nlohmann::json(nullptr);
  for (const MetricValue& v : m.test) row["test_" + v.name] = v.value;
  if (m.val_loss) {
    row["val_loss"] = *m.val_loss;
    for (const MetricValue& v : m.val) row["val_" + v.name] = v.value;
  }
  row["memory"] = memory_json(m.memory);
  row["host_syncs"] = host_syncs_json(m.host_syncs);
  if (m.phases.timed_steps > 0) {
    nlohmann::json phases = {{"timed_steps", m.phases.timed_steps}};
    for (int p = 0; p < kPhases; ++p) {
      const Phase phase = Phase(p);
      phases[to_string(phase)] = {{"seconds", m.phases.seconds[p]}, {"share", m.phases.share(phase)}};
    }
    row["phases"] = phases;
  }
  return row;
}

std::string epoch_history(const std::string& earlier, const std::vector<EpochMetrics>& epochs) {
  nlohmann::json rows = nlohmann::json::parse(earlier.empty() ? "[]" : earlier, nullptr, /*allow_exceptions=*/false);
  if (!rows.is_array()) rows = nlohmann::json::array();
  for (const auto& m : epochs) rows.push_back(epoch_json(m));
  return rows.dump();
}

std::optional<std::pair<double, std::vector<MetricValue>>> last_figures(const std::string& history,
                                                                        const std::vector<TaskMetric>& metrics,
                                                                        const std::string& split) {
  const nlohmann::json rows = nlohmann::json::parse(history.empty() ? "[]" : history, nullptr, false);
  if (!rows.is_array() || rows.empty()) return std::nullopt;
  const nlohmann::json& last = rows.back();
  const std::string loss = split + "_loss";
  if (!last.contains(loss) || !last[loss].is_number()) return std::nullopt;
  std::vector<MetricValue> values;
  for (const TaskMetric& m : metrics) {
    const auto cell = last.find(split + "_" + m.name);
    values.push_back({m.name, cell != last.end() && cell->is_number() ? cell->get<double>() : 0.0});
  }
  return std::make_pair(last[loss].get<double>(), values);
}

}  // namespace plugtrain
