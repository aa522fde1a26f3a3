// "emulated": an accelerator LibTorch does not know, brought in the way a hardware vendor brings
// one (Ascend's torch_npu, Cambricon's torch_mlu): a PrivateUse1 device under a name of its own,
// registered when the host initialises the plugin (never in the probe, which runs in a forked
// child), with its own memory pool, device guard, copies and a CPU fallback for every other
// operator. It answers the host's questions from its runtime's own figures.
#include <c10/core/DeviceType.h>

#include "emulated_device.h"
#include "plugtrain/backend.h"
#include "staged_collective.h"

namespace emulated {

std::optional<std::string> register_device() {
  if (auto error = configuration_error()) return error;
  // One PrivateUse1 per process: a second vendor plugin must not take it over.
  if (c10::is_privateuse1_backend_registered())
    return "PrivateUse1 is already registered as '" + c10::get_privateuse1_backend() +
           "': one process holds one PrivateUse1 device type, so " + EMULATED_DEVICE_NAME + " cannot be added";
  c10::register_privateuse1_backend(EMULATED_DEVICE_NAME);
  register_allocator();
  register_guard_and_hooks();
  register_kernels();
  register_host_kernels();
  return std::nullopt;
}

namespace {

std::string init_message;

const char* init() {
  auto error = register_device();
  if (!error) return nullptr;
  init_message = *error;
  return init_message.c_str();
}

void shutdown() {}

std::string gib(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", double(bytes) / (1024.0 * 1024 * 1024));
  return text;
}

class EmulatedBackend final : public plugtrain::Backend {
 public:
  plugtrain::Capabilities capabilities() const override {
    plugtrain::Capabilities c;
    c.device_type = EMULATED_DEVICE_NAME;
    c.host_cpu = false;  // an accelerator: `plugtrain run --no-gpu` leaves it out
    c.float64 = true;
    c.priority = 50;     // above the CPU, below real GPUs; and probe() asks automatic selection to pass it over
    c.strategies = {plugtrain::Strategy::single, plugtrain::Strategy::dp, plugtrain::Strategy::ddp};
    c.collective = "gloo-staged";
    c.profiler_activity = "";  // no Kineto profiler of its own: --profile records its host side
    // No autocast kernels are registered for it: autocast would compute in fp32 and say bf16.
    c.autocast_precisions = {};
    return c;
  }

  plugtrain::ProbeResult probe() override {
    plugtrain::ProbeResult r;
    if (auto error = configuration_error()) {
      r.code = plugtrain::ProbeCode::error;
      r.message = *error;
      return r;
    }
    r.code = plugtrain::ProbeCode::usable;
    r.message = std::to_string(device_count()) + " emulated devices of " + gib(capacity_bytes()) +
                " (PLUGTRAIN_EMU_DEVICES, PLUGTRAIN_EMU_MEMORY); operators without a kernel of their own run on the CPU";
    r.avoid_in_auto = "an emulated device computes on the CPU through copies: name it (backend.name = \"emulated\") "
                      "or let select = \"fastest\" measure it";
    for (int i = 0; i < device_count(); ++i) {
      plugtrain::DeviceInfo d;
      d.index = i;
      d.name = "emulated accelerator " + std::to_string(i);
      d.total_memory_bytes = capacity_bytes();
      d.free_memory_bytes = capacity_bytes();
      d.capability = "privateuse1";
      r.devices.push_back(d);
    }
    return r;
  }

  plugtrain::LoaderConfig loader_config(const std::vector<int>&) override {
    plugtrain::LoaderConfig c;
    c.workers = 0;
    c.pin_memory = false;
    c.non_blocking = true;  // a blocking copy would count as a host wait (host_waits.cpp)
    c.prefetch_depth = 1;
    c.why = "emulated device: a copy to it is a memcpy on the host, so pinned memory and workers gain nothing";
    return c;
  }

  plugtrain::MultiDevicePlan plan_multi_device(plugtrain::Strategy strategy, const std::vector<int>& devices) override {
    plugtrain::MultiDevicePlan plan;
    plan.strategy = strategy;
    for (int d : devices)
      if (d >= 0 && d < device_count()) plan.devices.push_back(d);
    if (plan.devices.size() < devices.size())
      plan.warnings.push_back("only " + std::to_string(device_count()) +
                              " emulated devices (PLUGTRAIN_EMU_DEVICES): the others are left out");
    if (plan.devices.empty()) plan.devices = {0};
    if (plan.strategy == plugtrain::Strategy::single && plan.devices.size() > 1) {
      plan.warnings.push_back("strategy single: training on " + std::string(EMULATED_DEVICE_NAME) + ":" +
                              std::to_string(plan.devices.front()) + " only (dp or ddp use the others)");
      plan.devices.resize(1);
    }
    if (plan.devices.size() == 1 && plan.strategy == plugtrain::Strategy::dp) plan.strategy = plugtrain::Strategy::single;
    plan.collective = plan.strategy == plugtrain::Strategy::ddp ? "gloo-staged" : "none";
    return plan;
  }

  plugtrain::MemoryInfo memory(int device) override {
    const PoolStats s = pool_stats(device);
    plugtrain::MemoryInfo m;
    m.total_bytes = capacity_bytes();
    m.free_bytes = capacity_bytes() - std::min(capacity_bytes(), s.reserved);
    m.process_used_bytes = s.allocated;
    m.process_peak_bytes = s.peak;
    m.reserved_bytes = s.reserved;
    m.oom_events = s.oom_events;
    m.note = "the emulated device's own pool (PLUGTRAIN_EMU_MEMORY per device)";
    return m;
  }

  void release_cached_memory(int device) override { release_cached(device); }

  bool reset_peak_memory(int device) override {
    reset_peak(device);
    return true;
  }

  // The host waits it counts (host_waits.cpp) and the operators that fell back to the CPU.
  plugtrain::RuntimeCounts runtime_counts(bool details) override {
    plugtrain::RuntimeCounts counts;
    counts.host_syncs = host_waits();
    if (details) {
      counts.host_syncs_by_cause = host_waits_by_cause();
      counts.cpu_fallbacks = fallback_counts();
    }
    return counts;
  }

  // ddp's "gloo-staged" (staged_collective.cpp).
  void* extension(const char* name, std::uint32_t version) override {
    return plugtrain::is_extension(name, version, plugtrain::kCollectiveExtension, 1) ? &collective_ : nullptr;
  }

 private:
  StagedCollective collective_;
};

}  // namespace
}  // namespace emulated

PLUGTRAIN_BACKEND_PLUGIN(emulated::EmulatedBackend, EMULATED_PLUGIN_NAME, "1.0.0",
                         "an accelerator LibTorch does not know, emulated on the CPU (a PrivateUse1 example)")
PLUGTRAIN_PLUGIN_HOOKS(emulated::init, emulated::shutdown)
