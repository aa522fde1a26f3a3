// plugtrain SDK 4 — optional: a backend plugin's count of the times the host waited for its
// device (the extension "plugtrain.host_syncs", version 1).
//
// On an accelerator, a step that reads a device value on the host (`loss.item()`, a copy to the
// CPU, `nonzero`, a blocking copy to the device, an explicit synchronisation) stalls the host
// until the device's queue drains, and breaks recorded graphs. A backend that can count these
// waits offers the count; `plugtrain run` then reports the waits per training step (the epoch
// line's device figures, summary.json's "host_syncs") and the operators that caused them.
//
//   void* extension(const char* name, std::uint32_t version) override {
//     return plugtrain::is_extension(name, version, plugtrain::kHostSyncsExtension, 1) ? &my_counter_ : nullptr;
//   }
//
// Count what a real device of yours would wait on, not what your emulation does internally.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "plugtrain/plugin.h"

namespace plugtrain {

inline constexpr const char* kHostSyncsExtension = "plugtrain.host_syncs";

// Implemented by the plugin, returned by Backend::extension("plugtrain.host_syncs", 1). Both
// calls may come from any thread, once per training step: keep them cheap (atomics).
class HostSyncCounter {
 public:
  virtual ~HostSyncCounter() = default;
  // Every wait since the plugin was initialised, over all its devices and threads.
  virtual std::uint64_t total() const = 0;
  // The same waits by cause: an operator ("aten::_local_scalar_dense", "aten::nonzero") or a
  // kind of transfer ("copy to the host", "blocking copy to the device", "device
  // synchronisation"). The counts sum to total().
  virtual std::map<std::string, std::uint64_t> by_cause() const = 0;
};

}  // namespace plugtrain
