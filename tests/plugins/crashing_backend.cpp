// Backends that crash (segfault) or never return, as a broken driver library can: in the probe
// (TEST_FAULT 0: crash, 1: hang), which the host must survive and report, or in the memory
// query during a run (TEST_FAULT 2), which the host must at least name before it dies.
#include <unistd.h>

#include <csignal>

#include "plugtrain/backend.h"

namespace {

class FaultyBackend final : public plugtrain::Backend {
 public:
  plugtrain::Capabilities capabilities() const override {
    plugtrain::Capabilities c;
    c.device_type = "cpu";
    c.priority = 50;  // before the CPU in automatic order, so automatic selection meets it first
    return c;
  }
  plugtrain::ProbeResult probe() override {
#if TEST_FAULT == 1
    for (;;) ::pause();
#elif TEST_FAULT == 0
    std::raise(SIGSEGV);
#endif
    plugtrain::DeviceInfo d;
    d.name = "a device whose memory query crashes";
    return {plugtrain::ProbeCode::usable, "usable", {d}, std::nullopt};
  }
  plugtrain::LoaderConfig loader_config(const std::vector<int>&) override { return {}; }
  plugtrain::MultiDevicePlan plan_multi_device(const plugtrain::MultiDeviceRequest&) override {
    plugtrain::MultiDevicePlan p;
    p.devices = {0};
    return p;
  }
  plugtrain::MemoryInfo memory(int) override {
#if TEST_FAULT == 2
    std::raise(SIGSEGV);
#endif
    return {};
  }
};

}  // namespace

PLUGTRAIN_BACKEND_PLUGIN(FaultyBackend, TEST_PLUGIN_NAME, "0.0.1", "a backend that crashes or hangs")
