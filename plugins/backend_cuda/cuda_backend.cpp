// The CUDA backend plugin. It links nothing from CUDA itself: the probe looks for the CUDA
// libraries (by loading the runtime part) and for the NVIDIA driver (dlopen of libcuda),
// so on any machine it loads and says exactly why CUDA is or is not usable.
#include <algorithm>

#include <c10/core/CachingDeviceAllocator.h>

#include "cuda_collective.h"
#include "cuda_driver_probe.h"
#include "cuda_graph_capture.h"
#include "cuda_runtime_loader.h"
#include "plugtrain/backend.h"

namespace plugtrain::cuda {

class CudaBackend final : public Backend {
 public:
  Capabilities capabilities() const override {
    Capabilities c;
    c.device_type = "cuda";
    c.priority = 200;
    c.strategies = {Strategy::single, Strategy::dp, Strategy::ddp};
    c.collective = "nccl";  // offered through extension() (cuda_collective.cpp); Gloo when built without NCCL
    c.visible_devices_variable = "CUDA_VISIBLE_DEVICES";
    c.profiler_activity = "cuda";
    return c;
  }

  ProbeResult probe() override { return probe_devices(); }

  static ProbeResult probe_devices() {
    const CudaRuntime& runtime = cuda_runtime();
    if (!runtime.loaded)
      return {ProbeCode::libraries_missing, "CUDA libraries cannot be loaded: " + runtime.error, {}, std::nullopt};
    return probe_cuda_driver(runtime.runtime_version());
  }

  LoaderConfig loader_config(const std::vector<int>& devices) override {
    // The original guides: at least one background worker (more with more devices), pinned
    // host memory, asynchronous copies, and the next batch copied on a side stream so the
    // GPU does not wait for data.
    LoaderConfig c;
    c.workers = std::max<int>(1, static_cast<int>(devices.size()));
    c.pin_memory = true;
    c.non_blocking = true;
    c.prefetch_depth = 2;
    c.why = "CUDA: background batch preparation, pinned memory, non_blocking copies on a side stream";
    return c;
  }

  MultiDevicePlan plan_multi_device(Strategy strategy, const std::vector<int>& devices) override {
    return plan_for(strategy, devices);
  }

  static MultiDevicePlan plan_for(Strategy strategy, const std::vector<int>& devices) {
    MultiDevicePlan plan;
    const std::size_t available = probe_devices().devices.size();
    for (int d : devices)
      if (d >= 0 && std::size_t(d) < available) plan.devices.push_back(d);
    if (plan.devices.size() < devices.size())
      plan.warnings.push_back("asked for " + std::to_string(devices.size()) + " CUDA devices, " +
                              std::to_string(available) + " present; using " + std::to_string(plan.devices.size()));
    if (plan.devices.empty()) plan.devices = {0};
    plan.strategy = strategy;
    if (plan.strategy == Strategy::dp && plan.devices.size() > 1) {
      plan.collective = "none";  // one process: replicas on each GPU, gradients summed on the first
      plan.warnings.push_back("strategy dp replicates the model in one process, as torch.nn.DataParallel does; "
                              "ddp (one process per GPU) is faster, as PyTorch recommends");
      return plan;
    }
    if (plan.strategy == Strategy::ddp) {
      const CudaRuntime& runtime = cuda_runtime();
      if (runtime.loaded && runtime.nccl_version() > 0) {
        plan.collective = "nccl";  // made by collective_ (cuda_collective.cpp)
      } else {
        plan.collective = "gloo";
        plan.warnings.push_back("this CUDA plugin was built without NCCL: ddp all-reduces through c10d Gloo");
      }
    } else {
      plan.collective = "none";
      plan.devices.resize(1);
      if (devices.size() > 1)
        plan.warnings.push_back("strategy " + std::string(to_string(strategy)) + " trains on one device: cuda:" +
                                std::to_string(plan.devices.front()));
    }
    return plan;
  }

  MemoryInfo memory(int device) override { return memory_of(device); }

  static MemoryInfo memory_of(int device) {
    const CudaRuntime& runtime = cuda_runtime();
    MemoryInfo m;
    if (!runtime.loaded) {
      m.note = "CUDA libraries cannot be loaded: " + runtime.error;
      return m;
    }
    plugtrain_cuda_memory q{};
    if (runtime.memory_query(device, &q) != 0) {
      m.note = q.error;
      return m;
    }
    m.total_bytes = q.total_bytes;
    m.free_bytes = q.free_bytes;
    m.process_used_bytes = q.allocated_bytes;
    m.process_peak_bytes = q.peak_allocated_bytes;
    m.reserved_bytes = q.reserved_bytes;
    m.oom_events = q.oom_events;
    m.note = "free/total from the driver; used/peak/reserved from LibTorch's caching allocator";
    return m;
  }

  // LibTorch's CUDA caching allocator, through c10's device-generic interface (the plugin links
  // no CUDA library). It exists once the runtime part is loaded; before that there is nothing.
  void release_cached_memory(int) override {
    if (cuda_runtime().loaded) c10::getDeviceAllocator(c10::DeviceType::CUDA)->emptyCache();
  }

  bool reset_peak_memory(int device) override {
    if (!cuda_runtime().loaded) return false;
    c10::getDeviceAllocator(c10::DeviceType::CUDA)->resetPeakStats(static_cast<c10::DeviceIndex>(device));
    return true;
  }

  std::unique_ptr<GraphCapture> make_graph_capture(int device, std::string& why_not) override {
    return make_cuda_graph_capture(device, why_not);
  }

  // The host's waits, counted by the runtime part through LibTorch's sync debug mode
  // (cuda_host_waits.cpp). The host's first ask (when it builds a run, on the thread that then
  // trains) starts the counting; before the runtime part is loaded there is nothing to count.
  RuntimeCounts runtime_counts(bool details) override {
    RuntimeCounts counts;
    const CudaRuntime& runtime = cuda_runtime();
    if (!runtime.loaded) return counts;
    counts.host_syncs = runtime.host_waits();
    if (details) runtime.host_waits_by_cause(&counts.host_syncs_by_cause);
    return counts;
  }

  void* extension(const char* name, std::uint32_t version) override {
    return is_extension(name, version, kCollectiveExtension, 1) ? &collective_ : nullptr;
  }

 private:
  NcclCollective collective_;
};

}  // namespace plugtrain::cuda

PLUGTRAIN_BACKEND_PLUGIN(plugtrain::cuda::CudaBackend, "cuda", "0.2.0", "NVIDIA GPUs through LibTorch CUDA")
