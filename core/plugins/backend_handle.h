// The host's view of one loaded backend plugin: every call guarded, the probe cached.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "plugtrain/backend.h"
#include "util/result.h"

namespace plugtrain {

class CollectiveFactory;  // plugtrain/collective.h (kept out of this header: it pulls in ATen)

// What the host asks plan_multi_device.
struct MultiDeviceRequest {
  std::vector<int> devices;  // device indices asked for
  Strategy strategy = Strategy::single;
};

class BackendHandle {
 public:
  // file: the plugin's file, which the process-wide probe rule keys on (isolated_probe.h).
  BackendHandle(std::string plugin_name, std::unique_ptr<Backend> backend, std::string file = {});

  const std::string& name() const { return name_; }

  // Never throws: an exception inside the plugin becomes ProbeCode::error with its message.
  const ProbeResult& probe();

  // This process does device work on this backend from now on: its later probes, from any
  // PluginHost, run in this process (isolated_probe.h says why). memory(), the memory calls and
  // make_graph_capture() say so themselves; plan_layout (run/device_layout.h) says so before a
  // run's first device work.
  void note_started() const;

  // These throw PluginError (naming the plugin) when the plugin throws.
  // Asked once, then kept (they are constant for the life of the plugin).
  const Capabilities& capabilities();
  LoaderConfig loader_config(const std::vector<int>& devices) const;
  MultiDevicePlan plan_multi_device(const MultiDeviceRequest& request) const;
  MemoryInfo memory(int device) const;
  void release_cached_memory(int device) const;
  bool reset_peak_memory(int device) const;
  // A graph recorder for `device`, or refused with the plugin's reason.
  Result<std::unique_ptr<GraphCapture>> make_graph_capture(int device) const;
  // What the backend has counted so far: the host's waits for the device, and with `details`
  // the same by cause and the operators that fell back to the CPU (RuntimeCounts, backend.h).
  RuntimeCounts runtime_counts(bool details) const;
  // Whether it counts the host's waits (asked once).
  bool counts_host_waits() const;
  // The plugin's own c10d collective for its device type (e.g. NCCL): the extension
  // "plugtrain.collective" (collective.h), or null when it offers none.
  CollectiveFactory* collective_factory() const;

 private:
  void refuse_beside_privateuse1(ProbeResult& probe);

  std::string name_;
  std::string file_;
  std::unique_ptr<Backend> backend_;
  std::optional<ProbeResult> probe_;
  std::optional<Capabilities> capabilities_;
  mutable std::optional<bool> counts_host_waits_;
};

}  // namespace plugtrain
