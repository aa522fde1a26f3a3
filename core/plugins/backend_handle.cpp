#include "plugins/backend_handle.h"

#include <c10/core/Device.h>
#include <c10/core/DeviceType.h>

#include <set>

#include "plugins/isolated_probe.h"
#include "plugins/plugin_error.h"
#include "plugtrain/collective.h"

namespace plugtrain {

BackendHandle::BackendHandle(std::string plugin_name, std::unique_ptr<Backend> backend, std::string file)
    : name_(std::move(plugin_name)), file_(std::move(file)), backend_(std::move(backend)) {}

const ProbeResult& BackendHandle::probe() {
  if (!probe_) {
    // In a child process: a probe that crashes or hangs costs this backend, not the command.
    probe_ = probe_isolated(
        name_, file_,
        [&]() -> ProbeResult {
          try {
            ProbeResult p = call_plugin(name_, "probe", [&] { return backend_->probe(); });
            if (!p.usable() && p.message.empty()) p.message = "probe gave no result";
            return p;
          } catch (const PluginError& e) {
            return ProbeResult{ProbeCode::error, e.what(), {}};
          }
        },
        probe_time_limit());
    if (probe_->usable() && probe_->devices.empty()) {
      probe_->code = ProbeCode::error;
      probe_->message = "probe said usable but listed no device";
    }
    if (probe_->usable()) refuse_beside_privateuse1(*probe_);
  }
  return *probe_;
}

// Once a plugin registers a PrivateUse1 device, LibTorch takes it for the process's accelerator
// (at::accelerator::getAccelerator prefers it), and autograd syncs the streams of that device
// alone: a backward on CUDA or MPS then stops at an internal assert in autograd's engine, as an
// H200 showed with the emulated device's plugin loaded. Such a backend is unusable here, said
// before any work, rather than failing in its first step.
void BackendHandle::refuse_beside_privateuse1(ProbeResult& probe) {
  if (!c10::is_privateuse1_backend_registered()) return;
  std::string type;
  try {
    type = capabilities().device_type;
  } catch (const std::exception&) {
    return;  // capabilities() reports its own failure where it is used
  }
  const std::string privateuse1 = c10::get_privateuse1_backend();
  // The accelerators getAccelerator would otherwise pick: devices with streams.
  static const std::set<c10::DeviceType> accelerators{c10::kCUDA, c10::kHIP, c10::kMPS, c10::kXPU, c10::kMTIA, c10::kHPU};
  if (type == privateuse1 || !accelerators.count(c10::Device(type).type())) return;
  probe.code = ProbeCode::unsupported_platform;
  probe.message = "not in this process: a plugin registered the PrivateUse1 device '" + privateuse1 +
                  "', which LibTorch then takes for the accelerator whose streams autograd follows, so a "
                  "backward on " + type + " fails; leave that plugin out of the search path to train on " + type;
}

void BackendHandle::note_started() const { note_runtime_started(file_); }

const Capabilities& BackendHandle::capabilities() {
  if (!capabilities_) {
    Capabilities c = call_plugin(name_, "capabilities", [&] { return backend_->capabilities(); });
    if (c.device_type.empty()) throw PluginError(name_, "capabilities name no device_type");
    // A device LibTorch does not know is one the plugin registered as PrivateUse1 at init; a
    // name LibTorch cannot parse (letters and '_' only) would fail later, far from its cause.
    try {
      (void)c10::Device(c.device_type);
    } catch (const std::exception&) {
      throw PluginError(name_, "capabilities name device_type '" + c.device_type +
                                   "', which LibTorch does not know (a PrivateUse1 name must be registered in "
                                   "the plugin's init and be letters and '_' only)");
    }
    capabilities_ = std::move(c);
  }
  return *capabilities_;
}

LoaderConfig BackendHandle::loader_config(const std::vector<int>& devices) const {
  return call_plugin(name_, "loader_config", [&] { return backend_->loader_config(devices); });
}

MultiDevicePlan BackendHandle::plan_multi_device(const MultiDeviceRequest& request) const {
  return call_plugin(name_, "plan_multi_device",
                     [&] { return backend_->plan_multi_device(request.strategy, request.devices); });
}

MemoryInfo BackendHandle::memory(int device) const {
  note_started();
  return call_plugin(name_, "memory", [&] { return backend_->memory(device); });
}

void BackendHandle::release_cached_memory(int device) const {
  note_started();
  call_plugin(name_, "release_cached_memory", [&] { backend_->release_cached_memory(device); });
}

bool BackendHandle::reset_peak_memory(int device) const {
  note_started();
  return call_plugin(name_, "reset_peak_memory", [&] { return backend_->reset_peak_memory(device); });
}

Result<std::unique_ptr<GraphCapture>> BackendHandle::make_graph_capture(int device) const {
  note_started();
  std::string why_not;  // the SDK's out-parameter: plugins are built against that signature
  std::unique_ptr<GraphCapture> capture =
      call_plugin(name_, "make_graph_capture", [&] { return backend_->make_graph_capture(device, why_not); });
  if (!capture) return WhyNot{why_not};
  return Result<std::unique_ptr<GraphCapture>>(std::move(capture));
}

RuntimeCounts BackendHandle::runtime_counts(bool details) const {
  return call_plugin(name_, "runtime_counts", [&] { return backend_->runtime_counts(details); });
}

bool BackendHandle::counts_host_waits() const {
  if (!counts_host_waits_) counts_host_waits_ = runtime_counts(false).host_syncs.has_value();
  return *counts_host_waits_;
}

CollectiveFactory* BackendHandle::collective_factory() const {
  return call_plugin(name_, "extension", [&] {
    return static_cast<CollectiveFactory*>(backend_->extension(kCollectiveExtension, 1));
  });
}

}  // namespace plugtrain
