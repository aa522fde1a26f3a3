// CUDA graphs for the runtime part: the C calls of cuda_runtime_api.h over at::cuda::CUDAGraph.
//
// As PyTorch's torch.cuda.graph does: warm-up runs and the capture happen on a side stream
// that first waits for the current stream, and the current stream then waits for it; the
// capture uses the graph's private memory pool, so the tensors the work allocates stay where
// the recording reads and writes them. The default CUDA generator is registered by
// CUDAGraph::capture_begin, so dropout draws new numbers on every replay.
#include <ATen/core/CachingHostAllocator.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>

#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "cuda_runtime_api.h"

namespace {

// The side stream where warm-ups and recordings run on a device: made here rather than taken
// from LibTorch's stream pool, which hands its 32 streams out in turn, so the loader's copy
// stream could be the very stream being recorded and its copies would land in the graph.
//
// One per device, shared by every graph, made on first use and never destroyed, as PyTorch's
// torch.cuda.graph shares one capture stream: the caching allocator and autograd keep the
// streams a tensor was used on (record_stream; the stream of a parameter's AccumulateGrad
// node), and a tensor freed after its stream was destroyed records an event on a dead stream
// ("CUDA error: context is destroyed"), as the model's gradients did at the end of a run
// whose graph was gone, or in the next benchmark of the same process.
c10::cuda::CUDAStream side_stream(c10::DeviceIndex device) {
  static std::mutex mutex;
  static std::map<c10::DeviceIndex, cudaStream_t> streams;
  std::lock_guard<std::mutex> lock(mutex);
  cudaStream_t& raw = streams[device];
  if (!raw) {
    c10::cuda::CUDAGuard guard(device);
    if (const cudaError_t rc = cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking); rc != cudaSuccess) {
      raw = nullptr;
      throw std::runtime_error(std::string("cannot make a stream for recording: ") + cudaGetErrorString(rc));
    }
  }
  return c10::cuda::getStreamFromExternal(raw, device);
}

struct Graph {
  c10::DeviceIndex device;
  c10::cuda::CUDAStream side;
  std::unique_ptr<at::cuda::CUDAGraph> graph;
};

void fail(char* error, size_t size, const char* what) { std::snprintf(error, size, "%s", what); }

// Runs `body` on the graph's side stream, ordered after and before the current stream's work.
template <class Body>
void on_side_stream(Graph& g, Body&& body) {
  c10::cuda::CUDAGuard device(g.device);
  const c10::cuda::CUDAStream current = c10::cuda::getCurrentCUDAStream(g.device);
  c10::cuda::CUDAEvent before;
  before.record(current);
  before.block(g.side);
  {
    c10::cuda::CUDAStreamGuard on_side(g.side);
    body();
  }
  c10::cuda::CUDAEvent after;
  after.record(g.side);
  after.block(current);
}

// A capture whose end failed (cudaStreamEndCapture refused it) leaves the allocators routing
// to its pool: CUDAGraph only lets go of a pool whose capture ended. Without this the eager
// steps after a refused recording would leak memory (no block freed for reuse).
//
// Each step is tried on its own, and a c10::Error from one (an allocator that was not routing
// to the pool, or a pool already gone, as when the failed end had let go of part of it) is
// ignored: there is then nothing of it left to undo, and the capture's own error, which the
// caller rethrows, is what the user must see.
void abandon_pool(c10::DeviceIndex device, c10::MempoolId_t pool) {
  try {
    c10::cuda::CUDACachingAllocator::endAllocateToPool(device, pool);
  } catch (const c10::Error&) {
    // nothing was routed to the pool on the device: nothing to end
  }
  try {
    at::getHostAllocator(at::kCUDA)->end_allocate_to_pool(pool);
  } catch (const c10::Error&) {
    // nor on the host
  }
  try {
    c10::cuda::CUDACachingAllocator::releasePool(device, pool);
  } catch (const c10::Error&) {
    // the pool is already released
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void* plugtrain_cuda_graph_create(int device, char* error,
                                                                                   size_t error_size) {
  try {
    const auto index = static_cast<c10::DeviceIndex>(device);
    return new Graph{index, side_stream(index), nullptr};
  } catch (const std::exception& e) {
    fail(error, error_size, e.what());
    return nullptr;
  }
}

extern "C" __attribute__((visibility("default"))) int plugtrain_cuda_graph_warm_up(void* graph,
                                                                                  plugtrain_cuda_work_fn work,
                                                                                  void* context, char* error,
                                                                                  size_t error_size) {
  try {
    on_side_stream(*static_cast<Graph*>(graph), [&] { work(context); });
    return 0;
  } catch (const std::exception& e) {
    fail(error, error_size, e.what());
    return 1;
  }
}

extern "C" __attribute__((visibility("default"))) int plugtrain_cuda_graph_capture(void* graph,
                                                                                  plugtrain_cuda_work_fn work,
                                                                                  void* context, char* error,
                                                                                  size_t error_size) {
  Graph& g = *static_cast<Graph*>(graph);
  try {
    g.graph.reset();  // a new recording replaces the last
    g.graph = std::make_unique<at::cuda::CUDAGraph>();
    const c10::MempoolId_t pool = at::cuda::graph_pool_handle();
    on_side_stream(g, [&] {
      // Thread-local: the loader's worker threads may copy the next batches to the device (and
      // allocate pinned memory) while this thread records; in the global mode those calls would
      // break the capture.
      g.graph->capture_begin(pool, cudaStreamCaptureModeThreadLocal);
      work(context);  // reports its own failure through `context`; the host checks it
      try {
        g.graph->capture_end();
      } catch (...) {
        abandon_pool(g.device, pool);
        throw;
      }
    });
    return 0;
  } catch (const std::exception& e) {
    g.graph.reset();
    fail(error, error_size, e.what());
    return 1;
  }
}

extern "C" __attribute__((visibility("default"))) int plugtrain_cuda_graph_replay(void* graph, char* error,
                                                                                 size_t error_size) {
  Graph& g = *static_cast<Graph*>(graph);
  if (!g.graph) {
    fail(error, error_size, "nothing was captured");
    return 1;
  }
  try {
    c10::cuda::CUDAGuard guard(g.device);
    g.graph->replay();
    return 0;
  } catch (const std::exception& e) {
    fail(error, error_size, e.what());
    return 1;
  }
}

extern "C" __attribute__((visibility("default"))) void plugtrain_cuda_graph_destroy(void* graph) {
  delete static_cast<Graph*>(graph);
}
