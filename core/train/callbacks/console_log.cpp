#include "train/callbacks/console_log.h"

#include <cstdio>
#include <ostream>

#include "util/format.h"

namespace plugtrain {

void ConsoleLog::on_train_start(LoopState& state) {
  if (state.resumed_from.empty()) return;
  const std::int64_t into_next = state.sampler.batches_done;
  log_ << "resumed from " << state.resumed_from.string() << ": " << state.epochs_done << " epochs and " << state.step
       << " steps done" << (into_next ? " (" + std::to_string(into_next) + " steps into the next epoch)" : "") << "\n";
}

void ConsoleLog::on_log_step(const LoopState& state, const StepFigures& f) {
  log_ << "  epoch " << state.epoch << " step " << state.step_in_epoch << "/" << state.steps_per_epoch << "  loss "
       << fixed(f.loss, 4) << "  lr " << f.lr << "  " << fixed(f.samples_per_second, 0) << " samples/s\n"
       << std::flush;
}

void ConsoleLog::on_batch_halved(const LoopState&, const BatchHalving& h) {
  log_ << "out of memory at step " << h.step << " (epoch " << h.epoch << ") with " << h.from
       << " samples per step: freed the device's cached memory; continuing with " << h.to << " per step";
  if (h.lr_after != h.lr_before) log_ << ", lr " << h.lr_before << " -> " << h.lr_after << " (optim.lr_scaling)";
  log_ << " [" << h.error << "]\n" << std::flush;
}

std::string short_metric_name(const std::string& metric) {
  static const std::pair<const char*, const char*> shorter[] = {
      {"accuracy", "acc"}, {"top5_accuracy", "top5"}, {"pixel_accuracy", "pixel_acc"}};
  for (const auto& [name, short_one] : shorter)
    if (metric == name) return short_one;
  return metric;
}

namespace {

void print_metrics(std::ostream& out, const std::vector<MetricValue>& values) {
  for (const MetricValue& v : values) out << " " << short_metric_name(v.name) << " " << fixed(v.value, 4);
}

}  // namespace

void ConsoleLog::on_late_test(LoopState&, const EpochMetrics& m) {
  if (!m.test_loss) return;
  log_ << "test after epoch " << m.epoch << " (final weights)  test loss " << fixed(*m.test_loss, 4);
  print_metrics(log_, m.test);
  log_ << "\n" << std::flush;
}

void ConsoleLog::on_epoch_end(LoopState& state, const EpochMetrics& m) {
  log_ << "epoch " << m.epoch << "/" << state.epochs << "  train loss " << fixed(m.train_loss, 4);
  print_metrics(log_, m.train);
  if (m.val_loss) {
    log_ << " | val loss " << fixed(*m.val_loss, 4);
    print_metrics(log_, m.val);
  }
  if (m.test_loss) {
    log_ << " | test loss " << fixed(*m.test_loss, 4);
    print_metrics(log_, m.test);
  }
  log_ << " | " << fixed(m.samples_per_second, 0) << " samples/s | " << fixed(m.seconds, 1) << " s";
  if (m.memory.process_used_bytes)
    log_ << " | mem " << format_bytes(m.memory.process_used_bytes) << " (peak "
         << format_bytes(m.memory.process_peak_bytes) << ")";
  if (m.host_syncs.counted && m.host_syncs.steady_steps > 0)
    log_ << " | host syncs " << fixed(m.host_syncs.per_step(), 2) << "/step";
  if (m.phases.timed_steps > 0) log_ << " | " << m.phases.text();
  log_ << "\n" << std::flush;
}

}  // namespace plugtrain
