// The CUDA runtime part: the only code in plugtrain linked against LibTorch's CUDA libraries.
// Loading it (dlopen from the plugin) loads libtorch_cuda, which registers LibTorch's CUDA
// kernels; it stays loaded for the life of the process.
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <exception>

#include "cuda_runtime_api.h"

extern "C" __attribute__((visibility("default"))) int plugtrain_cuda_runtime_version(void) {
  int version = 0;
  // Needs no driver and creates no context.
  if (cudaRuntimeGetVersion(&version) != cudaSuccess) return CUDART_VERSION;
  return version;
}

extern "C" __attribute__((visibility("default"))) int plugtrain_cuda_memory_query(int device,
                                                                                   plugtrain_cuda_memory* out) {
  *out = plugtrain_cuda_memory{};
  try {
    int previous = 0;
    cudaGetDevice(&previous);
    std::size_t free_bytes = 0, total_bytes = 0;
    cudaError_t rc = cudaSetDevice(device);
    if (rc == cudaSuccess) rc = cudaMemGetInfo(&free_bytes, &total_bytes);
    cudaSetDevice(previous);
    if (rc != cudaSuccess) {
      std::snprintf(out->error, sizeof out->error, "cudaMemGetInfo(%d): %s", device, cudaGetErrorString(rc));
      return 1;
    }
    out->free_bytes = free_bytes;
    out->total_bytes = total_bytes;
    // Before its first allocation the caching allocator has no devices (and its stats would throw
    // "Invalid device argument"): it holds nothing yet, as the zeros say. The plan asks here
    // (data.on_device) before the model is on the device.
    if (!c10::cuda::CUDACachingAllocator::get()->initialized()) return 0;
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(device));
    constexpr std::size_t all_pools = 0;  // StatType::AGGREGATE
    out->allocated_bytes = static_cast<uint64_t>(stats.allocated_bytes[all_pools].current);
    out->peak_allocated_bytes = static_cast<uint64_t>(stats.allocated_bytes[all_pools].peak);
    out->reserved_bytes = static_cast<uint64_t>(stats.reserved_bytes[all_pools].current);
    out->oom_events = static_cast<uint64_t>(stats.num_ooms);
    return 0;
  } catch (const std::exception& e) {
    std::snprintf(out->error, sizeof out->error, "%s", e.what());
    return 1;
  }
}
