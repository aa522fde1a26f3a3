// The CUDA plugin's collective for ddp: NCCL, made by the runtime part (which links
// libtorch_cuda); this file only forwards, so the plugin itself still links no CUDA.
#include "cuda_collective.h"

#include <cstdlib>
#include <string>

#include "cuda_runtime_loader.h"

namespace plugtrain::cuda {

c10::intrusive_ptr<c10d::Backend> NcclCollective::create(const CollectiveSetup& setup) {
  if (setup.collective() != "nccl") throw std::runtime_error("no collective '" + setup.collective() + "' (only nccl)");
  const CudaRuntime& runtime = cuda_runtime();
  if (!runtime.loaded) throw std::runtime_error("NCCL: CUDA libraries cannot be loaded: " + runtime.error);
  // The host binds Gloo to the interface that carries the ranks' traffic (GLOO_SOCKET_IFNAME,
  // distributed/rendezvous_network.h); NCCL's bootstrap takes the same one unless the user named one.
  if (const char* gloo = std::getenv("GLOO_SOCKET_IFNAME"); gloo && *gloo) ::setenv("NCCL_SOCKET_IFNAME", gloo, 0);
  char error[1024] = "";
  void* made = runtime.create_nccl(&setup, error, sizeof error);
  if (!made) throw std::runtime_error(std::string("NCCL on cuda:") + std::to_string(setup.device()) + ": " + error);
  return c10::intrusive_ptr<c10d::Backend>::reclaim(static_cast<c10d::Backend*>(made));
}

}  // namespace plugtrain::cuda
