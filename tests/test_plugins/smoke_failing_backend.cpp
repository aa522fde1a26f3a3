// A backend that probes usable but cannot train ("smokefail"): its device is LibTorch's meta
// device, where tensors have shapes but no values. `plugtrain doctor` must report it as FAIL.
#include "plugtrain/backend.h"

namespace {

class SmokeFailing final : public plugtrain::Backend {
 public:
  plugtrain::Capabilities capabilities() const override {
    plugtrain::Capabilities c;
    c.device_type = "meta";
    c.priority = 10;  // before the CPU in automatic order
    return c;
  }
  plugtrain::ProbeResult probe() override {
    plugtrain::DeviceInfo d;
    d.name = "a device with no values";
    return plugtrain::ProbeResult{plugtrain::ProbeCode::usable, "usable (but it cannot train)", {d}};
  }
  plugtrain::LoaderConfig loader_config(const std::vector<int>&) override { return plugtrain::LoaderConfig{}; }
  plugtrain::MultiDevicePlan plan_multi_device(plugtrain::Strategy, const std::vector<int>&) override {
    plugtrain::MultiDevicePlan p;
    p.devices = {0};
    return p;
  }
  plugtrain::MemoryInfo memory(int) override { return plugtrain::MemoryInfo{}; }
};

}  // namespace

PLUGTRAIN_BACKEND_PLUGIN(SmokeFailing, "smokefail", "0.0.1", "usable, but its smoke test fails")
