/* The C interface between the CUDA backend plugin and its runtime part.
 *
 * plugtrain_backend_cuda.so links nothing from CUDA: it probes the driver with dlopen and
 * loads cuda/plugtrain_cuda_runtime.so (which links libtorch_cuda, libc10_cuda, libcudart)
 * on first use. On a machine whose CUDA libraries are missing, that load fails and the probe
 * reports the loader's message as `libraries_missing`, while the host trains on the CPU. */
#ifndef PLUGTRAIN_CUDA_RUNTIME_API_H
#define PLUGTRAIN_CUDA_RUNTIME_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct plugtrain_cuda_memory {
  uint64_t free_bytes, total_bytes;          /* from the driver (cudaMemGetInfo) */
  uint64_t allocated_bytes, peak_allocated_bytes, reserved_bytes; /* LibTorch's caching allocator */
  uint64_t oom_events;
  char error[256]; /* empty on success */
} plugtrain_cuda_memory;

/* CUDA runtime version the runtime part was loaded with, e.g. 13000; 0 when unknown. */
typedef int (*plugtrain_cuda_runtime_version_fn)(void);
/* 0 on success; otherwise out->error says why. */
typedef int (*plugtrain_cuda_memory_query_fn)(int device, plugtrain_cuda_memory* out);

/* ddp: a connected c10d ProcessGroupNCCL for `setup` (a const plugtrain::CollectiveSetup*),
 * returned as a released c10d::Backend* (c10::intrusive_ptr<c10d::Backend>::reclaim takes it
 * back); NULL with `error` filled when it cannot be made. C++ objects cross here because the
 * plugin and its runtime part are one build. */
typedef void* (*plugtrain_cuda_create_nccl_fn)(const void* setup, char* error, size_t error_size);
/* The NCCL version the runtime part was built with (NCCL_VERSION_CODE, e.g. 22809); 0: none. */
typedef int (*plugtrain_cuda_nccl_version_fn)(void);

/* CUDA graphs (at::cuda::CUDAGraph) for GraphCapture (cuda_graph_capture.cpp). `work(context)`
 * is the host's callable; it reports its own failure through its context, so no C++ exception
 * crosses these C calls. Each returns 0 on success, else fills `error`. */
typedef void (*plugtrain_cuda_work_fn)(void* context);
/* A graph recorder for `device` with its own side stream; NULL with `error` filled. */
typedef void* (*plugtrain_cuda_graph_create_fn)(int device, char* error, size_t error_size);
/* Runs work eagerly on the side stream (warm-up), or records it there (capture). */
typedef int (*plugtrain_cuda_graph_run_fn)(void* graph, plugtrain_cuda_work_fn work, void* context, char* error,
                                           size_t error_size);
typedef int (*plugtrain_cuda_graph_replay_fn)(void* graph, char* error, size_t error_size);
typedef void (*plugtrain_cuda_graph_destroy_fn)(void* graph);

/* The host's waits for the device so far (cuda_host_waits.cpp: LibTorch's sync debug mode), and
 * the same by cause into `causes` (a std::map<std::string, uint64_t>*, one build as above). The
 * first call on a thread starts counting there: the caller is the training thread. */
typedef uint64_t (*plugtrain_cuda_host_waits_fn)(void);
typedef void (*plugtrain_cuda_host_waits_by_cause_fn)(void* causes);

#define PLUGTRAIN_CUDA_RUNTIME_VERSION_SYMBOL "plugtrain_cuda_runtime_version"
#define PLUGTRAIN_CUDA_MEMORY_QUERY_SYMBOL "plugtrain_cuda_memory_query"
#define PLUGTRAIN_CUDA_CREATE_NCCL_SYMBOL "plugtrain_cuda_create_nccl"
#define PLUGTRAIN_CUDA_NCCL_VERSION_SYMBOL "plugtrain_cuda_nccl_version"
#define PLUGTRAIN_CUDA_GRAPH_CREATE_SYMBOL "plugtrain_cuda_graph_create"
#define PLUGTRAIN_CUDA_GRAPH_WARM_UP_SYMBOL "plugtrain_cuda_graph_warm_up"
#define PLUGTRAIN_CUDA_GRAPH_CAPTURE_SYMBOL "plugtrain_cuda_graph_capture"
#define PLUGTRAIN_CUDA_GRAPH_REPLAY_SYMBOL "plugtrain_cuda_graph_replay"
#define PLUGTRAIN_CUDA_GRAPH_DESTROY_SYMBOL "plugtrain_cuda_graph_destroy"
#define PLUGTRAIN_CUDA_HOST_WAITS_SYMBOL "plugtrain_cuda_host_waits"
#define PLUGTRAIN_CUDA_HOST_WAITS_BY_CAUSE_SYMBOL "plugtrain_cuda_host_waits_by_cause"

#ifdef __cplusplus
}
#endif

#endif
