// A backend whose probe throws: the host must list it as unusable, naming the plugin.
#include <stdexcept>

#include "plugtrain/backend.h"

namespace {

class ThrowingBackend final : public plugtrain::Backend {
 public:
  plugtrain::Capabilities capabilities() const override { return plugtrain::Capabilities{"cpu"}; }
  plugtrain::ProbeResult probe() override { throw std::runtime_error("sensor exploded"); }
  plugtrain::LoaderConfig loader_config(const std::vector<int>&) override { return plugtrain::LoaderConfig{}; }
  plugtrain::MultiDevicePlan plan_multi_device(plugtrain::Strategy, const std::vector<int>&) override {
    return plugtrain::MultiDevicePlan{};
  }
  plugtrain::MemoryInfo memory(int) override { return plugtrain::MemoryInfo{}; }
};

}  // namespace

PLUGTRAIN_BACKEND_PLUGIN(ThrowingBackend, "throwprobe", "0.0.1", "probe always throws")
