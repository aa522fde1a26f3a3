// Stands in for MPS on an Apple M2 so selection policy can be tested on Linux: usable, but
// asks automatic selection to pass it over. Trains on the CPU device.
#include "plugtrain/backend.h"

namespace {

class FakeMps final : public plugtrain::Backend {
 public:
  plugtrain::Capabilities capabilities() const override {
    plugtrain::Capabilities c;
    c.device_type = "cpu";  // trains on the CPU device, but stands for a GPU
    c.priority = 100;
    return c;
  }
  plugtrain::ProbeResult probe() override {
    plugtrain::DeviceInfo d;
    d.name = "Apple M2 GPU (fake)";
    plugtrain::ProbeResult r{plugtrain::ProbeCode::usable, "Metal GPU of Apple M2 (fake)", {d}};
    r.avoid_in_auto = "on Apple M2 the CPU is often faster than MPS for small models";
    return r;
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

PLUGTRAIN_BACKEND_PLUGIN(FakeMps, "mps", "9.9.9", "fake MPS on an M2 for selection tests")
