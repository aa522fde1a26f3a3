// A backend built against the released SDK 3.3 headers (tests/sdk_headers/3.3, first on the
// include path), as a 3.x author's build is: today's host refuses it at the handshake, in one
// line, before touching any of its C++.
#include "plugtrain/backend.h"

static_assert(PLUGTRAIN_SDK_ABI_MAJOR == 3 && PLUGTRAIN_SDK_ABI_MINOR == 3, "the 3.3 headers must come first");

namespace {

class Sdk3Backend final : public plugtrain::Backend {
 public:
  plugtrain::Capabilities capabilities() const override {
    plugtrain::Capabilities c;
    c.device_type = "cpu";
    c.host_cpu = true;
    return c;
  }
  plugtrain::ProbeResult probe() override {
    return {plugtrain::ProbeCode::usable, "host cpu", {plugtrain::DeviceInfo{}}};
  }
  plugtrain::LoaderConfig loader_config(const std::vector<int>&) override { return {}; }
  plugtrain::MultiDevicePlan plan_multi_device(const plugtrain::MultiDeviceRequest&) override { return {}; }
  plugtrain::MemoryInfo memory(int) override { return {}; }
};

}  // namespace

PLUGTRAIN_BACKEND_PLUGIN(Sdk3Backend, "sdk33", "3.3.0", "a backend built against SDK 3.3")
