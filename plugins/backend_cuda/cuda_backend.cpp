// The CUDA backend plugin. It links nothing from CUDA itself: the probe looks for the CUDA
// libraries (by loading the runtime part) and for the NVIDIA driver (dlopen of libcuda),
// so on any machine it loads and says exactly why CUDA is or is not usable.
#include <algorithm>

#include "cuda_driver_probe.h"
#include "cuda_runtime_loader.h"
#include "plugtrain/backend.h"

namespace plugtrain::cuda {

class CudaBackend final : public Backend {
 public:
  std::string device_type() const override { return "cuda"; }

  ProbeResult probe() override {
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

  MultiDevicePlan plan_multi_device(const MultiDeviceRequest& request) override {
    MultiDevicePlan plan;
    plan.strategy = Strategy::single;
    plan.devices = {request.devices.empty() ? 0 : request.devices.front()};
    plan.collective = "none";
    if (request.devices.size() > 1 || request.strategy != Strategy::single)
      plan.warnings.push_back("multi-device CUDA training is not available in this build; using cuda:" +
                              std::to_string(plan.devices.front()));
    return plan;
  }

  MemoryInfo memory(int device) override {
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
};

}  // namespace plugtrain::cuda

PLUGTRAIN_BACKEND_PLUGIN(plugtrain::cuda::CudaBackend, "cuda", "0.2.0", "NVIDIA GPUs through LibTorch CUDA")
