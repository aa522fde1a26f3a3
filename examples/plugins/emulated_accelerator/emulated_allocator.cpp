// The device memory of the emulated accelerator: one pool per device, carved from host memory,
// with a capacity. Freed blocks stay reserved for reuse (like CUDA's caching allocator) until
// release_cached() or until an allocation would pass the capacity; an allocation that still
// does not fit throws c10::OutOfMemoryError, which the host's out-of-memory recovery catches.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include <c10/core/Allocator.h>
#include <c10/core/DeviceType.h>
#include <c10/util/Exception.h>

#include "emulated_device.h"

namespace emulated {
namespace {

std::optional<std::uint64_t> parse_bytes(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::size_t end = 0;
  double value = 0;
  try { value = std::stod(text, &end); } catch (const std::exception&) { return std::nullopt; }
  std::string suffix = text.substr(end);
  for (char& c : suffix) c = char(std::toupper(static_cast<unsigned char>(c)));
  if (suffix.size() > 1 && suffix.back() == 'B') suffix.pop_back();  // "512MB" as "512M"
  double scale = 1;
  if (suffix == "K") scale = 1024.0;
  else if (suffix == "M") scale = 1024.0 * 1024;
  else if (suffix == "G") scale = 1024.0 * 1024 * 1024;
  else if (!suffix.empty()) return std::nullopt;
  const double bytes = value * scale;
  if (!(bytes >= 1) || !(bytes < 1e18)) return std::nullopt;  // also refuses nan and inf
  return std::uint64_t(bytes);
}

std::optional<int> parse_count(const char* text) {
  if (!text) return 1;
  char* end = nullptr;
  const long n = std::strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || n < 1 || n > 16) return std::nullopt;
  return int(n);
}

constexpr std::size_t block_rounding = 512;  // like CUDA's allocator: fewer distinct sizes

struct Block {
  void* data;
  std::size_t size;
  int device;
};

struct Pool {
  std::multimap<std::size_t, void*> cached;  // freed blocks by size, kept for reuse
  std::map<const void*, std::size_t> live;   // blocks in tensors now
  PoolStats stats;
};

class EmulatedAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(std::size_t nbytes) override {
    const int device = current_device();
    const c10::Device where(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(device));
    if (nbytes == 0) return {nullptr, nullptr, &free_block, where};
    const std::size_t size = (nbytes + block_rounding - 1) / block_rounding * block_rounding;
    void* data = take(device, size);
    return {data, new Block{data, size, device}, &free_block, where};
  }

  void copy_data(void* dest, const void* src, std::size_t count) const override { std::memcpy(dest, src, count); }

  // Runs in DataPtr's destructor, which may not throw: a block that cannot be kept for reuse
  // goes back to the host.
  static void free_block(void* context) noexcept {
    if (!context) return;
    const Block* block = static_cast<Block*>(context);
    {
      std::lock_guard<std::mutex> lock(mutex());
      Pool& pool = pools()[std::size_t(block->device)];
      pool.live.erase(block->data);
      pool.stats.allocated -= block->size;
      try {
        pool.cached.emplace(block->size, block->data);
      } catch (...) {
        std::free(block->data);
        pool.stats.reserved -= block->size;
      }
    }
    delete block;
  }

  // Never destroyed (as c10's own allocators): a tensor freed while the process exits still
  // finds its pool.
  static std::mutex& mutex() {
    static auto* m = new std::mutex;
    return *m;
  }
  static std::vector<Pool>& pools() {
    static auto* p = new std::vector<Pool>(static_cast<std::size_t>(device_count()));
    return *p;
  }

  static void release(Pool& pool) {
    for (auto& [size, data] : pool.cached) {
      std::free(data);
      pool.stats.reserved -= size;
    }
    pool.cached.clear();
  }

 private:
  void* take(int device, std::size_t size) {
    std::lock_guard<std::mutex> lock(mutex());
    Pool& pool = pools().at(std::size_t(device));
    void* data = nullptr;
    if (auto hit = pool.cached.find(size); hit != pool.cached.end()) {
      data = hit->second;
      pool.cached.erase(hit);
    } else {
      if (pool.stats.reserved + size > capacity_bytes()) release(pool);  // as CUDA frees its cache first
      if (pool.stats.reserved + size > capacity_bytes()) {
        ++pool.stats.oom_events;
        TORCH_CHECK_WITH(OutOfMemoryError, false, EMULATED_DEVICE_NAME ":", device, " out of memory: tried to allocate ",
                         size, " bytes with ", pool.stats.allocated, " of ", capacity_bytes(),
                         " bytes in use (PLUGTRAIN_EMU_MEMORY)");
      }
      data = std::aligned_alloc(64, size);
      TORCH_CHECK_WITH(OutOfMemoryError, data != nullptr, "host memory for ", EMULATED_DEVICE_NAME, " ran out");
      pool.stats.reserved += size;
    }
    pool.live.emplace(data, size);
    pool.stats.allocated += size;
    pool.stats.peak = std::max(pool.stats.peak, pool.stats.allocated);
    return data;
  }
};

EmulatedAllocator& allocator() {
  static EmulatedAllocator a;
  return a;
}

thread_local int current = 0;

}  // namespace

// Read once: the guard and the allocator ask on every call, and the pools are sized by it.
int device_count() {
  static const int count = parse_count(std::getenv("PLUGTRAIN_EMU_DEVICES")).value_or(1);
  return count;
}

std::uint64_t capacity_bytes() {
  static const std::uint64_t capacity = [] {
    const char* text = std::getenv("PLUGTRAIN_EMU_MEMORY");
    return parse_bytes(text ? text : "4G").value_or(0);
  }();
  return capacity;
}

std::optional<std::string> configuration_error() {
  if (!parse_count(std::getenv("PLUGTRAIN_EMU_DEVICES")))
    return std::string("PLUGTRAIN_EMU_DEVICES='") + std::getenv("PLUGTRAIN_EMU_DEVICES") +
           "' is not a device count from 1 to 16";
  if (const char* text = std::getenv("PLUGTRAIN_EMU_MEMORY"); text && !parse_bytes(text))
    return std::string("PLUGTRAIN_EMU_MEMORY='") + text + "' is not a size in bytes (e.g. 536870912, 512M, 4G)";
  return std::nullopt;
}

int current_device() { return current; }
void set_current_device(int device) { current = device; }

PoolStats pool_stats(int device) {
  std::lock_guard<std::mutex> lock(EmulatedAllocator::mutex());
  return EmulatedAllocator::pools().at(std::size_t(device)).stats;
}

void reset_peak(int device) {
  std::lock_guard<std::mutex> lock(EmulatedAllocator::mutex());
  PoolStats& stats = EmulatedAllocator::pools().at(std::size_t(device)).stats;
  stats.peak = stats.allocated;
}

void release_cached(int device) {
  std::lock_guard<std::mutex> lock(EmulatedAllocator::mutex());
  EmulatedAllocator::release(EmulatedAllocator::pools().at(std::size_t(device)));
}

int device_of_pointer(const void* data) {
  std::lock_guard<std::mutex> lock(EmulatedAllocator::mutex());
  const auto& pools = EmulatedAllocator::pools();
  for (std::size_t d = 0; d < pools.size(); ++d) {
    const auto& live = pools[d].live;
    auto it = live.upper_bound(data);  // the block that starts at or before data
    if (it == live.begin()) continue;
    --it;
    if (static_cast<const char*>(data) < static_cast<const char*>(it->first) + it->second) return int(d);
  }
  return -1;
}

void register_allocator() { c10::SetAllocator(c10::DeviceType::PrivateUse1, &allocator()); }

}  // namespace emulated
