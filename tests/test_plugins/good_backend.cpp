// A well-behaved test backend ("testgood") with one fake device.
#include "plugtrain/backend.h"

namespace {

class GoodBackend final : public plugtrain::Backend {
 public:
  plugtrain::Capabilities capabilities() const override { return plugtrain::Capabilities{"cpu"}; }
  plugtrain::ProbeResult probe() override {
    plugtrain::DeviceInfo d;
    d.name = "test device";
    d.total_memory_bytes = 1024;
    return plugtrain::ProbeResult{plugtrain::ProbeCode::usable, "always usable", {d}};
  }
  plugtrain::LoaderConfig loader_config(const std::vector<int>&) override { return plugtrain::LoaderConfig{}; }
  plugtrain::MultiDevicePlan plan_multi_device(plugtrain::Strategy, const std::vector<int>&) override {
    return plugtrain::MultiDevicePlan{};
  }
  plugtrain::MemoryInfo memory(int) override { throw std::runtime_error("memory gauge broken"); }
};

}  // namespace

#ifdef TEST_ABI_MINOR  // the same plugin as built with another SDK minor
#undef PLUGTRAIN_SDK_ABI_MINOR
#define PLUGTRAIN_SDK_ABI_MINOR TEST_ABI_MINOR
#endif
#ifdef TEST_HANDSHAKE  // the handshake is handshake_sizes.cpp's, of another length than today's
#undef PLUGTRAIN_PLUGIN_INFO
#define PLUGTRAIN_PLUGIN_INFO(KINDS, NAME, VERSION, DESCRIPTION)
#endif
#ifndef TEST_PLUGIN_NAME
#define TEST_PLUGIN_NAME "testgood"
#endif
PLUGTRAIN_BACKEND_PLUGIN(GoodBackend, TEST_PLUGIN_NAME, "1.2.3", "test backend that always works")
