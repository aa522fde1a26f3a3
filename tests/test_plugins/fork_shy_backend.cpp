// "forkshy": a backend whose device runtime follows CUDA's rule about fork(): once a process has
// started it (here: the first memory() call, as the first tensor on a GPU does), a forked copy of
// that process cannot start it again, and its probe there fails as cuInit does ("initialization
// error"). The probe itself starts the runtime in the process it runs in, as CUDA's does.
#include <unistd.h>

#include "plugtrain/backend.h"

namespace {

pid_t started_in = 0;  // the process that started the runtime; copied into forked children

bool start_runtime() {
  if (started_in != 0 && started_in != ::getpid()) return false;
  started_in = ::getpid();
  return true;
}

class ForkShyBackend final : public plugtrain::Backend {
 public:
  plugtrain::Capabilities capabilities() const override { return plugtrain::Capabilities{"cpu"}; }
  plugtrain::ProbeResult probe() override { return probe_result(); }
  static plugtrain::ProbeResult probe_result() {
    if (!start_runtime()) return {plugtrain::ProbeCode::no_driver, "runtime start failed: initialization error", {}};
    plugtrain::DeviceInfo d;
    d.name = "a device that cannot start in a fork";
    return {plugtrain::ProbeCode::usable, "usable", {d}};
  }
  plugtrain::LoaderConfig loader_config(const std::vector<int>&) override { return plugtrain::LoaderConfig{}; }
  plugtrain::MultiDevicePlan plan_multi_device(plugtrain::Strategy, const std::vector<int>&) override {
    return plugtrain::MultiDevicePlan{};
  }
  plugtrain::MemoryInfo memory(int) override {
    start_runtime();
    return plugtrain::MemoryInfo{};
  }
};

}  // namespace

PLUGTRAIN_BACKEND_PLUGIN(ForkShyBackend, "forkshy", "0.0.1",
                         "a backend whose runtime cannot start in a fork of a process that started it")
