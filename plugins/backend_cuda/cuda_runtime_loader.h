// Loads the CUDA runtime part (cuda/plugtrain_cuda_runtime.so beside the plugin, or the file
// PLUGTRAIN_CUDA_RUNTIME names) once, and remembers why it failed if it did.
#pragma once

#include <string>

#include "cuda_runtime_api.h"

namespace plugtrain::cuda {

struct CudaRuntime {
  bool loaded = false;
  std::string error;  // the loader's message when not loaded
  std::string path;
  plugtrain_cuda_runtime_version_fn runtime_version = nullptr;
  plugtrain_cuda_memory_query_fn memory_query = nullptr;
  plugtrain_cuda_create_nccl_fn create_nccl = nullptr;
  plugtrain_cuda_nccl_version_fn nccl_version = nullptr;
  plugtrain_cuda_graph_create_fn graph_create = nullptr;
  plugtrain_cuda_graph_run_fn graph_warm_up = nullptr, graph_capture = nullptr;
  plugtrain_cuda_graph_replay_fn graph_replay = nullptr;
  plugtrain_cuda_graph_destroy_fn graph_destroy = nullptr;
  plugtrain_cuda_host_waits_fn host_waits = nullptr;
  plugtrain_cuda_host_waits_by_cause_fn host_waits_by_cause = nullptr;
};

const CudaRuntime& cuda_runtime();

}  // namespace plugtrain::cuda
