// The CUDA backend. This plugin is the only part of plugtrain that links LibTorch's CUDA
// libraries: on a machine without them it fails to load (the host reports the loader's
// message) and the host carries on with the other backends.
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>

#include "cuda_driver_probe.h"
#include "plugtrain/backend.h"

namespace plugtrain::cuda {

class CudaBackend final : public Backend {
 public:
  std::string device_type() const override { return "cuda"; }

  ProbeResult probe() override {
    int runtime = 0;
    // cudaRuntimeGetVersion needs no driver and creates no context.
    if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = CUDART_VERSION;
    return probe_cuda_driver(runtime);
  }

  LoaderConfig loader_config(const std::vector<int>& devices) override {
    // The original guides: at least one background worker (more with more devices),
    // pinned host memory and asynchronous copies so the GPU never waits for data.
    LoaderConfig c;
    c.workers = std::max<int>(1, static_cast<int>(devices.size()));
    c.pin_memory = true;
    c.non_blocking = true;
    c.prefetch_depth = 2;
    c.why = "CUDA: background workers, pinned memory and non_blocking copies overlap data with compute";
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
    MemoryInfo m;
    std::size_t free_bytes = 0, total_bytes = 0;
    int previous = 0;
    cudaGetDevice(&previous);
    if (cudaSetDevice(device) == cudaSuccess && cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
      m.free_bytes = free_bytes;
      m.total_bytes = total_bytes;
    }
    cudaSetDevice(previous);
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(device));
    const auto& reserved = stats.reserved_bytes[0];  // aggregate over pools
    m.process_used_bytes = static_cast<std::uint64_t>(stats.allocated_bytes[0].current);
    m.process_peak_bytes = static_cast<std::uint64_t>(stats.allocated_bytes[0].peak);
    m.note = "used/peak: LibTorch allocations; reserved by the caching allocator " +
             std::to_string(reserved.current) + " B; out-of-memory events " + std::to_string(stats.num_ooms);
    return m;
  }
};

}  // namespace plugtrain::cuda

PLUGTRAIN_BACKEND_PLUGIN(plugtrain::cuda::CudaBackend, "cuda", "0.1.0", "NVIDIA GPUs through LibTorch CUDA")
