// The runtime part's NCCL: c10d's ProcessGroupNCCL, the backend torch.distributed uses for
// CUDA tensors. Built only when the NCCL headers are found (the torch wheel's nvidia-nccl
// package has them); otherwise the export says so.
#include <cstdio>
#include <exception>
#include <string>

#include <c10/util/Exception.h>

#include "cuda_runtime_api.h"
#include "plugtrain/collective.h"

#ifdef USE_C10D_NCCL
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace {

// LibTorch's CUDA errors run over several lines (hints, a C++ stack): the first says what happened.
void* fail(const std::string& message, char* error, size_t error_size) {
  std::snprintf(error, error_size, "%s", message.substr(0, message.find('\n')).c_str());
  return nullptr;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int plugtrain_cuda_nccl_version(void) {
#ifdef USE_C10D_NCCL
  return NCCL_VERSION_CODE;
#else
  return 0;
#endif
}

extern "C" __attribute__((visibility("default"))) void* plugtrain_cuda_create_nccl(const void* setup_ptr, char* error,
                                                                                   size_t error_size) {
  const auto& setup = *static_cast<const plugtrain::CollectiveSetup*>(setup_ptr);
#ifdef USE_C10D_NCCL
  try {
    // As torch.cuda.set_device(local_rank) before init_process_group: NCCL binds to it.
    c10::cuda::set_device(static_cast<c10::DeviceIndex>(setup.device()));
    auto options = c10d::ProcessGroupNCCL::Options::create();
    options->timeout = setup.timeout();
    auto nccl = c10::make_intrusive<c10d::ProcessGroupNCCL>(setup.store(), setup.rank(), setup.world_size(), options);
    // Connect now (all ranks do), so a broken NCCL shows at start-up, not at the first step.
    nccl->eagerConnectSingleDevice(at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(setup.device())));
    c10::intrusive_ptr<c10d::Backend> backend = nccl;
    return backend.release();
  } catch (const c10::Error& e) {
    return fail(e.what_without_backtrace(), error, error_size);
  } catch (const std::exception& e) {
    return fail(e.what(), error, error_size);
  }
#else
  (void)setup;
  return fail("this build of the CUDA plugin has no NCCL (nccl.h was not found when it was built)", error, error_size);
#endif
}
