#include "train/host_sync_meter.h"

namespace plugtrain {

HostSyncMeter::HostSyncMeter(const DeviceContext& device) : device_(device) {}

void HostSyncMeter::start_epoch() {
  figures_ = HostSyncFigures();
  figures_.counted = bool(device_.host_waits);
  if (figures_.counted) epoch_start_ = device_.host_waits();
}

void HostSyncMeter::start_step() {
  if (!figures_.counted) return;
  step_start_ = device_.host_waits();
  if (trace_causes_) step_start_causes_ = device_.host_waits_by_cause();
}

void HostSyncMeter::end_step(bool steady) {
  if (!figures_.counted || !steady) return;
  const std::uint64_t waits = device_.host_waits() - step_start_;
  ++figures_.steady_steps;
  figures_.steady += waits;
  if (waits == 0) return;
  if (trace_causes_) {
    for (const auto& [cause, count] : device_.host_waits_by_cause()) {
      const auto before = step_start_causes_.find(cause);
      const std::uint64_t added = count - (before == step_start_causes_.end() ? 0 : before->second);
      if (added > 0) figures_.steady_causes[cause] += added;
    }
  }
  trace_causes_ = true;  // the steps like it from the next one on say why
}

HostSyncFigures HostSyncMeter::end_epoch() {
  if (figures_.counted) figures_.epoch = device_.host_waits() - epoch_start_;
  return figures_;
}

}  // namespace plugtrain
