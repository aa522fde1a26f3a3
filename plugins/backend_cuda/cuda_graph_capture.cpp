#include "cuda_graph_capture.h"

#include <exception>
#include <stdexcept>

#include "cuda_runtime_loader.h"

namespace plugtrain::cuda {

namespace {

// The host's callable behind the runtime part's C call: its exception is kept here and
// rethrown on this side, so none crosses the C boundary.
struct Work {
  const std::function<void()>* work;
  std::exception_ptr error;

  static void run(void* context) {
    auto* self = static_cast<Work*>(context);
    try {
      (*self->work)();
    } catch (...) {
      self->error = std::current_exception();
    }
  }
};

class CudaGraphCapture final : public GraphCapture {
 public:
  CudaGraphCapture(const CudaRuntime& runtime, void* graph) : runtime_(runtime), graph_(graph) {}
  ~CudaGraphCapture() override { runtime_.graph_destroy(graph_); }

  void warm_up(const std::function<void()>& work) override { run(runtime_.graph_warm_up, work, "warm-up"); }
  void capture(const std::function<void()>& work) override { run(runtime_.graph_capture, work, "capture"); }

  void replay() override {
    char error[512] = {};
    if (runtime_.graph_replay(graph_, error, sizeof error) != 0)
      throw std::runtime_error(std::string("CUDA graph replay: ") + error);
  }

 private:
  void run(plugtrain_cuda_graph_run_fn call, const std::function<void()>& work, const char* what) {
    Work w{&work, nullptr};
    char error[512] = {};
    const int rc = call(graph_, &Work::run, &w, error, sizeof error);
    // The work's own exception says more than the capture's end ("capture invalidated").
    if (w.error) std::rethrow_exception(w.error);
    if (rc != 0) throw std::runtime_error(std::string("CUDA graph ") + what + ": " + error);
  }

  const CudaRuntime& runtime_;
  void* graph_;
};

}  // namespace

std::unique_ptr<GraphCapture> make_cuda_graph_capture(int device, std::string& why_not) {
  const CudaRuntime& runtime = cuda_runtime();
  if (!runtime.loaded) {
    why_not = "CUDA libraries cannot be loaded: " + runtime.error;
    return nullptr;
  }
  char error[512] = {};
  void* graph = runtime.graph_create(device, error, sizeof error);
  if (!graph) {
    why_not = std::string("cannot prepare a CUDA graph on cuda:") + std::to_string(device) + ": " + error;
    return nullptr;
  }
  return std::make_unique<CudaGraphCapture>(runtime, graph);
}

}  // namespace plugtrain::cuda
