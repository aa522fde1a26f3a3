// The host's view of one loaded backend plugin: every call guarded, the probe cached.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <c10/util/intrusive_ptr.h>

#include "plugtrain/backend.h"
#include "util/result.h"

namespace c10d {
class Backend;
}

namespace plugtrain {

struct CollectiveSetup;
// The optional export of plugtrain/collective.h (kept out of this header: it pulls in ATen).
using CreateCollective = c10::intrusive_ptr<c10d::Backend>(const CollectiveSetup& setup);

class BackendHandle {
 public:
  // create_collective: the plugin's plugtrain_create_collective export, or null.
  // sdk_minor: the SDK ABI minor the plugin was built with (calls added later are not made).
  // file: the plugin's file, which the process-wide probe rule keys on (isolated_probe.h).
  BackendHandle(std::string plugin_name, std::unique_ptr<Backend> backend, CreateCollective* create_collective = nullptr,
                std::uint32_t sdk_minor = PLUGTRAIN_SDK_ABI_MINOR, std::string file = {});

  const std::string& name() const { return name_; }

  // Never throws: an exception inside the plugin becomes ProbeCode::error with its message.
  const ProbeResult& probe();

  // This process does device work on this backend from now on: its later probes, from any
  // PluginHost, run in this process (isolated_probe.h says why). memory(), the memory calls and
  // make_graph_capture() say so themselves; plan_run says so before a run's first device work.
  void note_started() const;

  // These throw PluginError (naming the plugin) when the plugin throws.
  // Asked once, then kept (they are constant for the life of the plugin).
  const Capabilities& capabilities();
  LoaderConfig loader_config(const std::vector<int>& devices) const;
  MultiDevicePlan plan_multi_device(const MultiDeviceRequest& request) const;
  MemoryInfo memory(int device) const;
  // SDK 3.1 calls; on an older plugin the first does nothing and the second returns false.
  void release_cached_memory(int device) const;
  bool reset_peak_memory(int device) const;
  // SDK 3.3: a graph recorder for `device`, or refused with the plugin's reason (also on an
  // older plugin, which has no such call).
  Result<std::unique_ptr<GraphCapture>> make_graph_capture(int device) const;
  // SDK 3.4: operators that fell back to the CPU so far, with counts (none on older plugins),
  // and the precisions autocast computes in (older plugins: bf16 and fp16).
  std::map<std::string, std::uint64_t> cpu_fallback_counts() const;
  std::vector<std::string> autocast_precisions() const;
  // The plugin's own c10d backend for its device type (e.g. NCCL), or null when it has none.
  CreateCollective* collective_factory() const { return create_collective_; }

 private:
  void refuse_beside_privateuse1(ProbeResult& probe);

  std::string name_;
  std::string file_;
  std::unique_ptr<Backend> backend_;
  std::optional<ProbeResult> probe_;
  std::optional<Capabilities> capabilities_;
  CreateCollective* create_collective_;
  std::uint32_t sdk_minor_;
};

}  // namespace plugtrain
