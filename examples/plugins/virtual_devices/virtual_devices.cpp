// "virtual": the host CPU presented as N logical devices (PLUGTRAIN_VIRTUAL_DEVICES, default 4),
// each with its share of the cores, so multi-device code (dp replicas, ddp over Gloo with one
// process per device) can be tried on a laptop. A complete backend plugin: the four questions
// every backend answers (probe, loader config, multi-device plan, memory) and its capabilities.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include <ATen/Parallel.h>

#include "plugtrain/backend.h"

namespace {

int virtual_devices() {
  const char* n = std::getenv("PLUGTRAIN_VIRTUAL_DEVICES");
  const int count = n ? std::atoi(n) : 4;
  return std::clamp(count, 1, 64);
}

int cores() { return std::max(1u, std::thread::hardware_concurrency()); }
int cores_per_device() { return std::max(1, cores() / virtual_devices()); }

std::uint64_t physical_memory() {
  return std::uint64_t(sysconf(_SC_PHYS_PAGES)) * std::uint64_t(sysconf(_SC_PAGE_SIZE));
}

// This process's resident set size, from /proc (Linux); 0 where there is none.
std::uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * std::uint64_t(sysconf(_SC_PAGE_SIZE));
}

class VirtualDevices final : public plugtrain::Backend {
 public:
  // Asked once after loading, without touching hardware.
  plugtrain::Capabilities capabilities() const override {
    plugtrain::Capabilities c;
    c.device_type = "cpu";  // tensors live on the host CPU
    c.host_cpu = true;      // `plugtrain run --no-gpu` keeps it
    c.priority = -10;       // below the bundled cpu backend: used when named (backend.name = "virtual")
    c.strategies = {plugtrain::Strategy::single, plugtrain::Strategy::dp, plugtrain::Strategy::ddp};
    c.collective = "gloo";
    return c;
  }

  // Cheap and without side effects: it runs in a child process with a time limit.
  plugtrain::ProbeResult probe() override {
    plugtrain::ProbeResult r;
    r.code = plugtrain::ProbeCode::usable;
    const int n = virtual_devices();
    r.message = std::to_string(n) + " virtual devices of " + std::to_string(cores_per_device()) + " cores each";
    for (int i = 0; i < n; ++i) {
      plugtrain::DeviceInfo d;
      d.index = i;
      d.name = "virtual cpu " + std::to_string(i);
      d.total_memory_bytes = physical_memory() / n;
      d.details["cores"] = std::to_string(cores_per_device());
      r.devices.push_back(d);
    }
    return r;
  }

  // Each process trains on its devices' share of the cores.
  plugtrain::LoaderConfig loader_config(const std::vector<int>& devices) override {
    const int threads = std::max<int>(1, cores_per_device() * int(std::max<std::size_t>(1, devices.size())));
    at::set_num_threads(std::min(threads, cores()));
    plugtrain::LoaderConfig c;
    c.workers = 0;
    c.prefetch_depth = 0;
    c.why = "virtual devices: " + std::to_string(at::get_num_threads()) + " intra-op threads for this process";
    return c;
  }

  plugtrain::MultiDevicePlan plan_multi_device(plugtrain::Strategy strategy, const std::vector<int>& devices) override {
    plugtrain::MultiDevicePlan plan;
    plan.strategy = strategy;
    for (int d : devices)
      if (d < virtual_devices()) plan.devices.push_back(d);
    if (plan.devices.size() < devices.size())
      plan.warnings.push_back("only " + std::to_string(virtual_devices()) +
                              " virtual devices (PLUGTRAIN_VIRTUAL_DEVICES): the others are left out");
    if (plan.devices.empty()) plan.devices = {0};
    plan.collective = strategy == plugtrain::Strategy::ddp ? "gloo" : "none";
    return plan;
  }

  plugtrain::MemoryInfo memory(int) override {
    plugtrain::MemoryInfo m;
    m.total_bytes = physical_memory() / virtual_devices();
    m.process_used_bytes = resident_bytes();
    m.note = "a share of system RAM; process figures are resident set size";
    return m;
  }
};

}  // namespace

PLUGTRAIN_BACKEND_PLUGIN(VirtualDevices, "virtual", "1.0.0", "the host CPU as N logical devices (an example plugin)")
