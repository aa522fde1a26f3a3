// Counts the host's waits for the device step by step in the epoch loop (HostSyncFigures), from
// the backend's own count (DeviceContext::host_waits). Does nothing when the backend cannot count.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "train/device_context.h"
#include "train/loop_state.h"

namespace plugtrain {

class HostSyncMeter {
 public:
  explicit HostSyncMeter(const DeviceContext& device);

  void start_epoch();
  void start_step();
  // `steady`: not a warm-up step, and the step neither logged nor wrote a checkpoint.
  void end_step(bool steady);
  HostSyncFigures end_epoch();

 private:
  const DeviceContext& device_;
  HostSyncFigures figures_;
  std::uint64_t epoch_start_ = 0, step_start_ = 0;
  // The causes are read only around steps after a steady step that waited: reading them costs a
  // lock and a map, reading the total an atomic.
  bool trace_causes_ = false;
  std::map<std::string, std::uint64_t> step_start_causes_;
};

}  // namespace plugtrain
