#include "run/summary_writer.h"

#include <cstdio>
#include <ostream>

#include <nlohmann/json.hpp>

#include "plugins/cpu_fallbacks.h"
#include "train/epoch_record.h"
#include "util/atomic_file.h"
#include "version.h"

namespace plugtrain {

namespace {

// Out-of-memory errors that halved the batch (train/epoch_loop.cpp).
nlohmann::json halvings_json(const std::vector<BatchHalving>& halvings) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& h : halvings)
    rows.push_back({{"epoch", h.epoch}, {"step", h.step}, {"from", h.from}, {"to", h.to},
                    {"lr_before", h.lr_before}, {"lr_after", h.lr_after}, {"error", h.error}});
  return rows;
}

// null for a fresh start.
nlohmann::json resume_json(const ResumePoint& p) {
  if (p.checkpoint.empty()) return nullptr;
  return {{"checkpoint", p.checkpoint.string()},
          {"epochs_done", p.epochs_done},
          {"steps_done", p.steps_done},
          {"steps_into_epoch", p.steps_into_epoch}};
}

// {"accuracy": 0.91, "top5_accuracy": 0.99}
// fsdp's figures; null for a run that keeps the model whole.
nlohmann::json sharding_json(const std::optional<ShardingFigures>& s) {
  if (!s) return nullptr;
  return {{"shard", s->shard},
          {"units", s->units},
          {"largest_unit_bytes", s->largest_unit_bytes},
          {"root_bytes", s->root_bytes},
          {"peak_gathered_bytes", s->peak_gathered_bytes}};
}

nlohmann::json plan_json(const PlanSummary& p) {
  return {{"strategy", p.strategy},
          {"world_size", p.world_size},
          {"world_source", p.world_source.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.world_source)},
          {"devices", p.devices},
          {"batch",
           {{"per_device", p.per_device_batch},
            {"devices", p.devices_used},
            {"global", p.global_batch},
            {"lr", p.lr},
            {"lr_factor", p.lr_factor}}}};
}

nlohmann::json metrics_json(const std::vector<MetricValue>& values) {
  nlohmann::json object = nlohmann::json::object();
  for (const MetricValue& v : values) object[v.name] = v.value;
  return object;
}

nlohmann::json summary_json(const Experiment& e, const RunResult& r, std::int64_t parameters) {
  // Every epoch of the run: those before a resume come from the checkpoint it resumed.
  const nlohmann::json epochs = nlohmann::json::parse(epoch_history(r.summary.earlier_epochs_json, r.summary.epochs));
  nlohmann::json j = {{"experiment", e.experiment.name},
                      {"source", e.source},
                      {"model", e.model.name},
                      {"parameters", parameters},
                      {"dataset", e.data.dataset_name},
                      {"backend", r.backend},
                      {"device", r.device},
                      {"seed", e.experiment.seed},
                      {"steps", r.summary.steps},
                      {"interrupted", r.summary.interrupted},
                      {"paused", r.summary.paused},
                      {"stopped_early", r.summary.stopped_early},
                      {"stop_reason", r.summary.stop_reason},
                      {"precision", word_of(e.train.precision)},
                      {"skipped_steps", r.summary.skipped_steps},
                      {"step_batch", r.summary.step_batch},
                      {"nonfinite_skipped_steps", r.summary.nonfinite_skipped_steps},
                      {"batch_halvings", halvings_json(r.summary.halvings)},
                      {"graph_replays", r.summary.graph_replays},
                      {"graph_fallback", r.summary.graph_fallback},
                      {"cpu_fallbacks", r.cpu_fallbacks},
                      {"host_syncs", host_syncs_json(total_host_syncs(r.summary.epochs))},
                      {"step_host_reads", r.step_host_reads},
                      {"resumed_from", resume_json(r.summary.resumed)},
                      {"task", e.task.name},
                      {"metric", r.summary.headline.name},
                      {"metric_direction", word_of(direction_of(r.summary.headline.goal))},
                      {"selection_split", r.summary.selection_split},
                      {"best_" + r.summary.selection_split + "_" + r.summary.headline.name, r.summary.best_selected},
                      {"best_epoch", r.summary.best_epoch},
                      {"ema_evaluated", r.summary.ema_evaluated},
                      {"swa_epochs", r.summary.swa_epochs},
                      {"final_test_" + r.summary.headline.name, r.summary.final_headline()},
                      {"final_test_loss", r.summary.final_test_loss},
                      {"final_test", metrics_json(r.summary.final_test)},
                      {"final_test_per_class", metrics_json(r.summary.final_per_class)},
                      {"total_seconds", r.summary.total_seconds},
                      {"samples_per_second", r.summary.samples_per_second},
                      {"plugtrain", PLUGTRAIN_VERSION},
                      {"world_size", r.world_size},
                      {"strategy", r.summary.strategy},
                      {"plan", plan_json(r.plan)},
                      {"state_bytes", r.summary.state_bytes},
                      {"sharding", sharding_json(r.summary.sharding)},
                      {"epochs", epochs}};
  if (r.summary.selection_split == "val") {
    // true: the data set has no test labels, and final_test_* are on the val split that chose.
    j["test_is_val"] = r.summary.test_is_val;
    j["final_val_" + r.summary.headline.name] = r.summary.final_val.empty() ? 0.0 : r.summary.final_val.front().value;
    j["final_val_loss"] = r.summary.final_val_loss;
    j["final_val"] = metrics_json(r.summary.final_val);
  }
  return j;
}

}  // namespace

void write_summary(const Experiment& e, RunResult& result, std::int64_t parameters, RunOutputs& outputs) {
  std::ostream& log = outputs.log;
  result.summary_file = outputs.run_folder / "summary.json";
  write_file_atomically(result.summary_file, summary_json(e, result, parameters).dump(2) + "\n");
  const TrainSummary& s = result.summary;
  if (s.interrupted) {
    log << (s.paused ? s.stop_reason : "interrupted (" + s.stop_reason + ")")
        << (outputs.checkpoints.empty() ? std::string(": no checkpoint written (checkpoint.save = \"none\")")
                                        : ": checkpoint " + (outputs.checkpoints / "last.ckpt").string() +
                                              "\nresume with: plugtrain run " + e.source + " --resume last")
        << std::endl;  // now: a scheduler's SIGKILL may follow its SIGTERM before the exit would flush it
    return;
  }
  if (s.stopped_early) log << s.stop_reason << "\n";
  if (s.swa_epochs > 0)
    log << "swa: the final weights are the average of the last " << s.swa_epochs
        << " epochs' (batch norm recomputed over the training set); the last checkpoint holds them\n";
  if (const std::string fallbacks = describe_fallbacks(result.cpu_fallbacks); !fallbacks.empty())
    log << "warning: " << result.backend << ": " << fallbacks
        << " instead of its device; summary.json lists them (cpu_fallbacks)\n";
  if (!s.graph_fallback.empty())
    log << "graphs: the step could not be recorded (" << s.graph_fallback << "); trained eagerly after "
        << s.graph_replays << " replays\n";
  char line[512];
  std::snprintf(line, sizeof line, "done: final test %s %.4f (best %s %.4f at epoch %lld), %.1f s, %.0f samples/s on %s\n",
                s.headline.name.c_str(), s.final_headline(), s.selection_split.c_str(), s.best_selected,
                static_cast<long long>(s.best_epoch),
                s.total_seconds, s.samples_per_second, result.device.c_str());
  log << line << "summary: " << result.summary_file.string() << "\n";
}

}  // namespace plugtrain
