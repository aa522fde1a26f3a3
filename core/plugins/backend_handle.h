// The host's view of one loaded backend plugin: every call guarded, the probe cached.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "plugtrain/backend.h"

namespace plugtrain {

class BackendHandle {
 public:
  BackendHandle(std::string plugin_name, std::unique_ptr<Backend> backend);

  const std::string& name() const { return name_; }

  // Never throws: an exception inside the plugin becomes ProbeCode::error with its message.
  const ProbeResult& probe();

  // These throw PluginError (naming the plugin) when the plugin throws.
  std::string device_type() const;
  LoaderConfig loader_config(const std::vector<int>& devices) const;
  MultiDevicePlan plan_multi_device(const MultiDeviceRequest& request) const;
  MemoryInfo memory(int device) const;

 private:
  std::string name_;
  std::unique_ptr<Backend> backend_;
  std::optional<ProbeResult> probe_;
};

}  // namespace plugtrain
