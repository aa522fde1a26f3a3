// The Apple MPS backend: the GPU of Apple Silicon Macs through LibTorch's MPS device.
#include "platform_facts.h"

#include <ATen/detail/MPSHooksInterface.h>

#if defined(__APPLE__)
#include <sys/sysctl.h>
#endif

namespace plugtrain::mps {

namespace {

std::optional<std::uint64_t> unified_memory_bytes() {
#if defined(__APPLE__)
  std::uint64_t total = 0;
  std::size_t len = sizeof total;
  if (sysctlbyname("hw.memsize", &total, &len, nullptr, 0) == 0) return total;
#endif
  return std::nullopt;
}

}  // namespace

class MpsBackend final : public Backend {
 public:
  Capabilities capabilities() const override {
    Capabilities c;
    c.device_type = "mps";
    c.float64 = false;  // Metal has no float64
    c.priority = 100;
    c.strategies = {Strategy::single};  // one GPU, no collective
    c.collective = "none";
    return c;
  }

  ProbeResult probe() override {
    const PlatformFacts facts = current_platform();
    ProbeResult result = mps_availability(facts);
    if (result.usable()) {
      DeviceInfo gpu;
      gpu.index = 0;
      gpu.name = facts.chip.empty() ? "Apple GPU" : facts.chip + " GPU";
      gpu.capability = "mps";
      gpu.total_memory_bytes = unified_memory_bytes();  // shared with the CPU
      gpu.details["memory"] = "unified";
      // LibTorch's MPS view of the device: the working-set size Metal recommends.
      const std::size_t recommended = at::detail::getMPSHooks().getRecommendedMaxMemory();
      if (recommended > 0) gpu.details["recommended max"] = std::to_string(recommended >> 20) + " MiB";
      result.devices.push_back(std::move(gpu));
    }
    return result;
  }

  LoaderConfig loader_config(const std::vector<int>&) override {
    LoaderConfig c;
    c.workers = 0;
    c.pin_memory = false;  // MPS has no pinned memory
    c.non_blocking = false;
    c.prefetch_depth = 1;
    c.why = "MPS: no background workers and no pinned memory (unsupported on MPS)";
    return c;
  }

  MultiDevicePlan plan_multi_device(Strategy strategy, const std::vector<int>& devices) override {
    MultiDevicePlan plan;
    plan.strategy = Strategy::single;
    plan.devices = {0};
    plan.collective = "none";
    if (devices.size() > 1 || strategy != Strategy::single)
      plan.warnings.push_back("MPS has one device and no DDP: training on mps:0 alone");
    return plan;
  }

  MemoryInfo memory(int) override {
    MemoryInfo m;
    m.total_bytes = unified_memory_bytes();
    m.free_bytes = std::nullopt;
    if (at::detail::getMPSHooks().hasMPS()) {
      m.process_used_bytes = at::detail::getMPSHooks().getCurrentAllocatedMemory();  // LibTorch's MPS allocator
      m.reserved_bytes = at::detail::getMPSHooks().getDriverAllocatedMemory();        // held by Metal for us
    }
    m.note = "unified memory shared with the CPU: free is unknowable";
    return m;
  }

  void release_cached_memory(int) override {
    if (at::detail::getMPSHooks().hasMPS()) at::detail::getMPSHooks().emptyCache();
  }
};

}  // namespace plugtrain::mps

PLUGTRAIN_BACKEND_PLUGIN(plugtrain::mps::MpsBackend, "mps", "0.1.0", "Apple Silicon GPUs through LibTorch MPS")
