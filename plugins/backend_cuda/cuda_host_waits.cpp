// The host's waits for the GPU (RuntimeCounts::host_syncs), counted by the runtime part through
// LibTorch's sync debug mode: with c10::cuda::warning_state() at L_WARN, every operation that
// makes the host wait for the device (an item(), a blocking copy to or from the host, nonzero
// and the other operators whose result size depends on the data, an explicit
// synchronisation through c10::cuda) raises the warning "called a synchronizing CUDA
// operation" (torch.cuda.set_sync_debug_mode("warn") in Python). A c10::WarningHandler counts
// those and hands every other warning to the handler it replaced.
//
// c10's warning handler is per thread, so the counter is installed on each thread that asks for
// the count: the training thread, which asks around every step (HostSyncMeter), and is taken
// off again when that thread ends. Waits in a backward pass happen on autograd's device
// threads, whose engine collects their warnings and replays them on the thread that called
// backward: they are counted there, as "backward". What the sync debug mode does not see is not
// counted: a raw cudaEventSynchronize or cudaDeviceSynchronize (c10's device-neutral guard, the
// host's own timing syncs), and waits on threads that never asked (dp's replica threads).
#include <c10/cuda/CUDAFunctions.h>
#include <c10/util/Exception.h>
#include <dlfcn.h>
#include <execinfo.h>

#include <atomic>
#include <cctype>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "cuda_runtime_api.h"

namespace {

constexpr std::string_view kSyncWarning = "called a synchronizing CUDA operation";

std::atomic<std::uint64_t> wait_total{0};
std::mutex wait_causes_mutex;
std::map<std::string, std::uint64_t> wait_causes;

// "aten::<op>" from the innermost frame of an operator's entry point (at::_ops::<op>::call or
// ::redispatch, exported by LibTorch), mangled "_ZN2at4_ops<length><op>...".
std::optional<std::string> operator_of(std::string_view mangled) {
  constexpr std::string_view prefix = "_ZN2at4_ops";
  if (mangled.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::size_t i = prefix.size(), length = 0;
  for (; i < mangled.size() && std::isdigit(static_cast<unsigned char>(mangled[i])); ++i)
    length = length * 10 + std::size_t(mangled[i] - '0');
  if (length == 0 || i + length > mangled.size()) return std::nullopt;
  return "aten::" + std::string(mangled.substr(i, length));
}

// Why the host waited, from the call stack of the warning: the operator that waited, "backward"
// for a wait on autograd's threads (replayed by its engine), an explicit device synchronisation,
// or "CUDA synchronisation" when none of those is on the stack. A wait already costs the
// device's whole queue; walking 48 frames (dladdr: exported symbols only) is small beside it.
std::string cause_of_wait() {
  void* frames[48];
  const int n = ::backtrace(frames, 48);
  for (int i = 0; i < n; ++i) {
    Dl_info info{};
    if (::dladdr(frames[i], &info) == 0 || !info.dli_sname) continue;
    const std::string_view name = info.dli_sname;
    if (name.rfind("_ZN5torch8autograd6Engine", 0) == 0) return "backward";
    if (name.rfind("_ZN3c104cuda18device_synchronize", 0) == 0) return "device synchronisation";
    if (std::optional<std::string> op = operator_of(name)) return *op;
  }
  return "CUDA synchronisation";
}

class CountingHandler final : public c10::WarningHandler {
 public:
  explicit CountingHandler(c10::WarningHandler* previous) : previous_(previous) {}
  c10::WarningHandler* previous() const { return previous_; }

  void process(const c10::Warning& warning) override {
    if (warning.msg().rfind(kSyncWarning, 0) != 0) {
      previous_->process(warning);
      return;
    }
    const std::string cause = cause_of_wait();
    wait_total.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(wait_causes_mutex);
    ++wait_causes[cause];
  }

 private:
  c10::WarningHandler* previous_;
};

// The counter on one thread, from its first count to the thread's end.
struct ThreadCounter {
  CountingHandler handler{c10::WarningUtils::get_warning_handler()};
  ThreadCounter() { c10::WarningUtils::set_warning_handler(&handler); }
  ~ThreadCounter() {
    if (c10::WarningUtils::get_warning_handler() == &handler)
      c10::WarningUtils::set_warning_handler(handler.previous());
  }
  ThreadCounter(const ThreadCounter&) = delete;
  ThreadCounter& operator=(const ThreadCounter&) = delete;
};

void count_on_this_thread() {
  thread_local ThreadCounter counter;
  (void)counter;
  // Process-wide; set once the first counter is in place, so the first warnings have a counter.
  static const bool enabled = [] {
    c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_WARN);
    return true;
  }();
  (void)enabled;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) uint64_t plugtrain_cuda_host_waits(void) {
  count_on_this_thread();
  return wait_total.load(std::memory_order_relaxed);
}

extern "C" __attribute__((visibility("default"))) void plugtrain_cuda_host_waits_by_cause(void* out) {
  count_on_this_thread();
  std::lock_guard<std::mutex> lock(wait_causes_mutex);
  *static_cast<std::map<std::string, std::uint64_t>*>(out) = wait_causes;
}
