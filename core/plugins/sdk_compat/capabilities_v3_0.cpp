#include "plugins/sdk_compat/capabilities_v3_0.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "plugins/sdk_compat/frozen_v3.h"

namespace plugtrain::sdk_compat {

namespace {

// Every plugin whose handshake says 3.0 built one of three Capabilities shapes (frozen_v3.h):
// the released six fields, or main's later seven or eight, each a std::string appended to the
// one before. They are told apart by what the plugin wrote: the host fills storage big enough
// for the longest with a byte pattern, the plugin constructs its own shape at the start of it,
// and an appended string whose bytes all still hold the pattern was never constructed (a
// constructed std::string stores at least its size and, in libstdc++, a pointer; neither can
// be a run of 0xA5 bytes).
constexpr unsigned char kUntouched = 0xA5;
constexpr std::size_t kVisibleDevicesAt = sizeof(v3::Capabilities_3_0);
constexpr std::size_t kProfilerActivityAt = sizeof(v3::Capabilities_3_0_ec94635);
static_assert(kVisibleDevicesAt % alignof(std::string) == 0 &&
                  kVisibleDevicesAt + sizeof(std::string) == kProfilerActivityAt &&
                  kProfilerActivityAt + sizeof(std::string) == sizeof(v3::Capabilities_3_1),
              "each later shape appends one std::string, without padding, where the one before ends");

}  // namespace

// Outside the unnamed namespace on purpose: a class the compiler can see every derived class
// of (none, here) has its virtual calls resolved at compile time, to the pure virtual.
namespace v3_0 {

// Room for the longest shape. The user-provided destructor makes it non-trivial for calls, so
// it is returned the way the plugin returns its Capabilities (whose strings make it
// non-trivial too): into storage whose address the caller passes (Itanium C++ ABI).
struct CapabilitiesStorage {
  CapabilitiesStorage(const CapabilitiesStorage&) = delete;
  ~CapabilitiesStorage() {}
  alignas(v3::Capabilities_3_1) unsigned char bytes[sizeof(v3::Capabilities_3_1)];
};

// Backend as SDK 3.0 declared it (27dd373): today's first slots, in the same order, with the
// 3.0 types. Only capabilities() is called through it.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual CapabilitiesStorage capabilities() const = 0;  // really one of the three shapes
  virtual v3::ProbeResult probe() = 0;
  virtual v3::LoaderConfig loader_config(const std::vector<int>& devices) = 0;
  virtual v3::MultiDevicePlan plan_multi_device(const v3::MultiDeviceRequest& request) = 0;
  virtual v3::MemoryInfo memory(int device) = 0;
};

}  // namespace v3_0

namespace {

// The compiler must assume this reads and writes *p: the fill before the call is really
// stored, and the bytes read after it are the ones the plugin left.
inline void opaque(void* p) { asm volatile("" : : "r"(p) : "memory"); }

bool untouched(const unsigned char* p, std::size_t n) {
  return std::all_of(p, p + n, [](unsigned char b) { return b == kUntouched; });
}

// Moves an appended string the plugin constructed into `into` and ends its life there.
void take_appended(unsigned char* at, std::string& into) noexcept {
  if (untouched(at, sizeof(std::string))) return;  // a shorter shape: `into` keeps its default
  std::string* s = std::launder(reinterpret_cast<std::string*>(at));
  into = std::move(*s);
  s->~basic_string();
}

}  // namespace

Capabilities capabilities_of_3_0_plugin(const Backend& plugin) {
  Capabilities today;  // made first: once the plugin's struct exists, nothing below throws
  alignas(v3_0::CapabilitiesStorage) unsigned char storage[sizeof(v3_0::CapabilitiesStorage)];
  std::memset(storage, kUntouched, sizeof storage);
  opaque(storage);
  // As far as its table goes, the plugin's object is a 3.0 Backend.
  const auto& old = reinterpret_cast<const v3_0::Backend&>(plugin);
  // C++17: the returned object is constructed right in `storage` (no copy; there is none).
  ::new (static_cast<void*>(storage)) v3_0::CapabilitiesStorage(old.capabilities());
  opaque(storage);

  // The first six fields sit where all three shapes put them.
  auto* common = std::launder(reinterpret_cast<v3::Capabilities_3_0*>(storage));
  today.device_type = std::move(common->device_type);
  today.host_cpu = common->host_cpu;
  today.float64 = common->float64;
  today.priority = common->priority;
  today.strategies = std::move(common->strategies);
  today.collective = std::move(common->collective);
  common->~Capabilities_3_0();
  take_appended(storage + kVisibleDevicesAt, today.visible_devices_variable);
  take_appended(storage + kProfilerActivityAt, today.profiler_activity);
  return today;
}

}  // namespace plugtrain::sdk_compat
