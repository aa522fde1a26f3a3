// "faulty": a CPU-like backend whose entry points fail on demand (fault_switch.h): any of
// init, create_backend, capabilities, probe, loader_config, plan_multi_device, memory,
// release_cached_memory, reset_peak_memory, shutdown throws, crashes or hangs
// (PLUGTRAIN_TEST_FAULT=init:refuse: init says it cannot work). Its lifecycle hooks append
// "init" and "shutdown" lines to the file PLUGTRAIN_TEST_HOOK_LOG names. Without
// PLUGTRAIN_TEST_FAULT it is a usable backend with one device, ahead of the CPU in
// automatic order so that selection meets it first.
#include <fstream>

#include "fault_switch.h"
#include "plugtrain/backend.h"

namespace {

using plugtrain_test::fault_point;

void log_hook(const char* line) {
  if (const char* path = std::getenv("PLUGTRAIN_TEST_HOOK_LOG")) std::ofstream(path, std::ios::app) << line << "\n";
}

const char* init() {
  const char* fault = std::getenv("PLUGTRAIN_TEST_FAULT");
  if (fault && std::string(fault) == "init:refuse") return "the device firmware is too old";
  fault_point("init");
  log_hook("init");
  return nullptr;
}

void shutdown() {
  fault_point("shutdown");
  log_hook("shutdown");
}

class FaultyBackend final : public plugtrain::Backend {
 public:
  FaultyBackend() { fault_point("create_backend"); }
  plugtrain::Capabilities capabilities() const override {
    fault_point("capabilities");
    plugtrain::Capabilities c;
    c.device_type = "cpu";
    c.priority = 50;
    return c;
  }
  plugtrain::ProbeResult probe() override {
    fault_point("probe");
    plugtrain::DeviceInfo d;
    d.name = "a device that fails when told to";
    return plugtrain::ProbeResult{plugtrain::ProbeCode::usable, "usable", {d}, std::nullopt};
  }
  plugtrain::LoaderConfig loader_config(const std::vector<int>&) override {
    fault_point("loader_config");
    return plugtrain::LoaderConfig{};
  }
  plugtrain::MultiDevicePlan plan_multi_device(plugtrain::Strategy, const std::vector<int>&) override {
    fault_point("plan_multi_device");
    plugtrain::MultiDevicePlan p;
    p.devices = {0};
    return p;
  }
  plugtrain::MemoryInfo memory(int) override {
    fault_point("memory");
    return plugtrain::MemoryInfo{};
  }
  void release_cached_memory(int) override { fault_point("release_cached_memory"); }
  bool reset_peak_memory(int) override {
    fault_point("reset_peak_memory");
    return false;
  }
};

}  // namespace

PLUGTRAIN_PLUGIN_HOOKS(init, shutdown)
PLUGTRAIN_BACKEND_PLUGIN(FaultyBackend, "faulty", "0.0.1", "a backend whose entry points fail when told to")
