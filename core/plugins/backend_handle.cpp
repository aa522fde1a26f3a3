#include "plugins/backend_handle.h"

#include "plugins/plugin_error.h"

namespace plugtrain {

BackendHandle::BackendHandle(std::string plugin_name, std::unique_ptr<Backend> backend,
                             CreateCollective* create_collective)
    : name_(std::move(plugin_name)), backend_(std::move(backend)), create_collective_(create_collective) {}

const ProbeResult& BackendHandle::probe() {
  if (!probe_) {
    try {
      probe_ = call_plugin(name_, "probe", [&] { return backend_->probe(); });
      if (probe_->usable() && probe_->devices.empty()) {
        probe_->code = ProbeCode::error;
        probe_->message = "probe said usable but listed no device";
      }
    } catch (const PluginError& e) {
      probe_ = ProbeResult{ProbeCode::error, e.what(), {}};
    }
  }
  return *probe_;
}

std::string BackendHandle::device_type() const {
  return call_plugin(name_, "device_type", [&] { return backend_->device_type(); });
}

LoaderConfig BackendHandle::loader_config(const std::vector<int>& devices) const {
  return call_plugin(name_, "loader_config", [&] { return backend_->loader_config(devices); });
}

MultiDevicePlan BackendHandle::plan_multi_device(const MultiDeviceRequest& request) const {
  return call_plugin(name_, "plan_multi_device",
                     [&] { return backend_->plan_multi_device(request); });
}

MemoryInfo BackendHandle::memory(int device) const {
  return call_plugin(name_, "memory", [&] { return backend_->memory(device); });
}

}  // namespace plugtrain
