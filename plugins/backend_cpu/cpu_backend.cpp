// The CPU backend: always usable; reports cores, LibTorch's intra-op threads and RAM.
#include <ATen/Parallel.h>

#include "host_memory.h"
#include "plugtrain/backend.h"

namespace plugtrain::cpu {

namespace {

std::string instruction_set() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return "x86-64 avx512f";
  if (__builtin_cpu_supports("avx2")) return "x86-64 avx2";
  return "x86-64";
#elif defined(__aarch64__)
  return "arm64 neon";
#else
  return "";
#endif
}

}  // namespace

class CpuBackend final : public Backend {
 public:
  Capabilities capabilities() const override {
    Capabilities c;
    c.device_type = "cpu";
    c.host_cpu = true;
    c.priority = 0;  // the fallback: any accelerator that is usable comes first
    c.strategies = {Strategy::single, Strategy::dp, Strategy::ddp};
    c.collective = "gloo";
    return c;
  }

  ProbeResult probe() override {
    const SystemMemory mem = system_memory();
    DeviceInfo cpu;
    cpu.index = 0;
    cpu.name = cpu_model_name();
    cpu.capability = instruction_set();
    cpu.total_memory_bytes = mem.total_bytes;
    cpu.free_memory_bytes = mem.available_bytes;
    cpu.details["cores"] = std::to_string(logical_cores());
    cpu.details["intra-op threads"] = std::to_string(at::get_num_threads());
    ProbeResult result;
    result.code = ProbeCode::usable;
    result.message = std::to_string(logical_cores()) + " cores, " + std::to_string(at::get_num_threads()) +
                     " intra-op threads";
    result.devices.push_back(std::move(cpu));
    return result;
  }

  LoaderConfig loader_config(const std::vector<int>&) override {
    // The original guides' CPU row: no workers, no pinned memory. Batches are gathered on
    // the training thread (prefetch 0): LibTorch's intra-op threads already use every core,
    // and a background producer only competes with them (measured by
    // bench/trainer_overhead_bench: prefetch 1 cost more than half the MLP's throughput).
    LoaderConfig c;
    c.workers = 0;
    c.pin_memory = false;
    c.non_blocking = false;
    c.prefetch_depth = 0;
    c.why = "CPU: batches gathered on the training thread; no pinned memory or async copies needed";
    return c;
  }

  MultiDevicePlan plan_multi_device(Strategy strategy, const std::vector<int>& devices) override {
    return plan_for(strategy, devices);
  }

  // ddp on the CPU: one process per "device", each with its share of the cores, gradients
  // all-reduced through Gloo. dp (replicas in one process) would only split the same cores.
  static MultiDevicePlan plan_for(Strategy strategy, const std::vector<int>& devices) {
    MultiDevicePlan plan;
    plan.strategy = strategy;
    plan.devices = devices.empty() ? std::vector<int>{0} : devices;
    if (strategy == Strategy::ddp) {
      plan.collective = "gloo";
      return plan;
    }
    plan.collective = "none";
    if (strategy == Strategy::dp && plan.devices.size() > 1) {
      // Every "device" is the same CPU: dp runs, so a laptop can check a dp experiment, but the
      // replicas only share the cores one process would use.
      plan.warnings.push_back("strategy dp on the CPU runs " + std::to_string(plan.devices.size()) +
                              " model replicas in one process on the same cores: it checks a dp experiment, it "
                              "does not train faster (strategy = \"ddp\" runs one process per device)");
      return plan;
    }
    if (plan.devices.size() > 1) plan.warnings.push_back("strategy single trains in one process on cpu:0");
    plan.strategy = Strategy::single;
    plan.devices = {0};
    return plan;
  }

  MemoryInfo memory(int) override {
    const SystemMemory sys = system_memory();
    const ProcessMemory proc = process_memory();
    MemoryInfo m;
    m.total_bytes = sys.total_bytes;
    m.free_bytes = sys.available_bytes;
    m.process_used_bytes = proc.resident_bytes;
    m.process_peak_bytes = proc.peak_resident_bytes;
    m.note = "system RAM; process figures are resident set size";
    return m;
  }

  void release_cached_memory(int) override { trim_heap(); }
  bool reset_peak_memory(int) override { return reset_peak_resident(); }
};

}  // namespace plugtrain::cpu

PLUGTRAIN_BACKEND_PLUGIN(plugtrain::cpu::CpuBackend, "cpu", "0.1.0",
                         "LibTorch on the host CPU (always available)")
