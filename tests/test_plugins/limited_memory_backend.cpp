// A backend ("limited") that trains on the host CPU but has as much memory as the test says:
// PLUGTRAIN_TEST_MEMORY_LIMIT bytes. It puts a counting allocator in front of LibTorch's CPU
// allocator, so every CPU tensor allocated past the limit fails with LibTorch's own
// c10::OutOfMemoryError, exactly as a full GPU does, and its memory query reports what is in
// use and the peak since the last reset. For the automatic batch size and out-of-memory tests.
#include <atomic>
#include <cstdlib>
#include <string>

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/alignment.h>
#include <c10/util/Exception.h>

#include "plugtrain/backend.h"

namespace {

class LimitedCpuAllocator final : public c10::Allocator {
 public:
  explicit LimitedCpuAllocator(std::uint64_t limit) : limit_(limit) {}

  c10::DataPtr allocate(std::size_t n) override {
    void* data = raw_allocate_counted(n);
    return {data, data, &release, c10::Device(c10::kCPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
  void copy_data(void* dest, const void* src, std::size_t count) const override { default_copy_data(dest, src, count); }

  std::uint64_t used() const { return used_.load(); }
  std::uint64_t peak() const { return peak_.load(); }
  std::uint64_t limit() const { return limit_; }
  void reset_peak() { peak_.store(used_.load()); }

 private:
  // Each block carries its size in a header as large as the alignment, so the deleter (which
  // only gets the data pointer) knows what to give back.
  static constexpr std::size_t kHeader = c10::gAlignment;

  void* raw_allocate_counted(std::size_t n) {
    const std::uint64_t now = used_.fetch_add(n) + n;
    if (now > limit_) {
      used_.fetch_sub(n);
      TORCH_CHECK_WITH(OutOfMemoryError, false, "limited test device: out of memory: tried to allocate ", n,
                       " bytes with ", now - n, " of ", limit_, " bytes in use");
    }
    std::uint64_t peak = peak_.load();
    while (now > peak && !peak_.compare_exchange_weak(peak, now)) {}
    const std::size_t bytes = (n + 2 * kHeader - 1) / kHeader * kHeader;  // aligned_alloc wants a multiple
    char* block = static_cast<char*>(std::aligned_alloc(kHeader, bytes));
    if (!block) {
      used_.fetch_sub(n);
      TORCH_CHECK_WITH(OutOfMemoryError, false, "limited test device: the system has no ", bytes, " bytes");
    }
    *reinterpret_cast<std::size_t*>(block) = n;
    return block + kHeader;
  }

  static void release(void* data) {
    if (!data) return;
    char* block = static_cast<char*>(data) - kHeader;
    instance->used_.fetch_sub(*reinterpret_cast<std::size_t*>(block));
    std::free(block);
  }

  std::uint64_t limit_;
  std::atomic<std::uint64_t> used_{0}, peak_{0};

 public:
  static LimitedCpuAllocator* instance;
};

LimitedCpuAllocator* LimitedCpuAllocator::instance = nullptr;

// Installed once, when the plugin is first created with a limit in the environment; from then
// on every CPU tensor of the process is counted (tensors made before keep their own deleter).
LimitedCpuAllocator* limited_allocator() {
  static LimitedCpuAllocator* allocator = []() -> LimitedCpuAllocator* {
    const char* limit = std::getenv("PLUGTRAIN_TEST_MEMORY_LIMIT");
    if (!limit || !*limit) return nullptr;
    LimitedCpuAllocator::instance =
        new LimitedCpuAllocator(std::strtoull(limit, nullptr, 10));  // lives as long as the process
    c10::SetCPUAllocator(LimitedCpuAllocator::instance, /*priority=*/100);
    return LimitedCpuAllocator::instance;
  }();
  return allocator;
}

class LimitedMemoryBackend final : public plugtrain::Backend {
 public:
  LimitedMemoryBackend() { limited_allocator(); }

  plugtrain::Capabilities capabilities() const override {
    plugtrain::Capabilities c;
    c.device_type = "cpu";
    c.priority = -10;  // never chosen automatically: tests name it
    return c;
  }
  plugtrain::ProbeResult probe() override { return probe_result(); }
  static plugtrain::ProbeResult probe_result() {
    if (!limited_allocator())
      return {plugtrain::ProbeCode::no_device, "PLUGTRAIN_TEST_MEMORY_LIMIT is not set", {}, std::nullopt};
    plugtrain::DeviceInfo d;
    d.name = "host CPU with " + std::to_string(limited_allocator()->limit()) + " bytes";
    d.total_memory_bytes = limited_allocator()->limit();
    return {plugtrain::ProbeCode::usable, "usable (memory limited by the test)", {d}, std::nullopt};
  }
  plugtrain::LoaderConfig loader_config(const std::vector<int>&) override { return plugtrain::LoaderConfig{}; }
  plugtrain::MultiDevicePlan plan_multi_device(plugtrain::Strategy, const std::vector<int>&) override {
    plugtrain::MultiDevicePlan p;
    p.devices = {0};
    return p;
  }
  plugtrain::MemoryInfo memory(int) override {
    plugtrain::MemoryInfo m;
    if (LimitedCpuAllocator* a = limited_allocator()) {
      m.total_bytes = a->limit();
      m.free_bytes = a->limit() - std::min(a->limit(), a->used());
      m.process_used_bytes = a->used();
      m.process_peak_bytes = a->peak();
    }
    m.note = "limited by PLUGTRAIN_TEST_MEMORY_LIMIT";
    return m;
  }
  bool reset_peak_memory(int) override {
    if (LimitedCpuAllocator* a = limited_allocator()) a->reset_peak();
    return true;
  }
};

}  // namespace

PLUGTRAIN_BACKEND_PLUGIN(LimitedMemoryBackend, "limited", "0.0.1", "the host CPU with a memory limit set by the test")
