// A backend ("sdk" TEST_SDK, e.g. "sdk30") built against a released SDK's own headers
// (tests/sdk_headers/<version>, first on the include path: old_sdk_module in CMakeLists.txt),
// as a plugin author's build from back then really is. It trains on the host CPU. Every field
// its SDK has gets a value no default has, derived from TEST_SDK and TEST_SDK_NUMBER, so
// tests/sdk_versions_test.cpp sees exactly what crossed; fields its SDK lacked must reach the
// host as their defaults. Strings are longer than the short-string buffer, so each one owns
// heap memory that the host takes over and frees.
#include <atomic>
#include <stdexcept>
#include <string>

#include "plugtrain/backend.h"
#include "sdk_layout.h"

static_assert(PLUGTRAIN_SDK_ABI_MINOR == TEST_SDK_MINOR, "the released headers must come first on the include path");

namespace {

constexpr std::uint64_t N = TEST_SDK_NUMBER;
const std::string kTag = TEST_SDK;

class OldSdkBackend final : public plugtrain::Backend {
 public:
  plugtrain::Capabilities capabilities() const override {
    plugtrain::Capabilities c;
    c.device_type = "cpu";  // trains for real
    c.host_cpu = true;
    c.float64 = false;
    c.priority = -int(N);
    c.strategies = {plugtrain::Strategy::single, plugtrain::Strategy::dp};
    c.collective = "collective of the sdk " + kTag + " plugin";
#if TEST_CAPABILITY_FIELDS >= 7
    c.visible_devices_variable = "SDK" + kTag + "_VISIBLE_DEVICES_FOR_THIS_TEST";
#endif
#if TEST_CAPABILITY_FIELDS >= 8
    c.profiler_activity = "profiler activity of the sdk " + kTag + " plugin";
#endif
    return c;
  }

  plugtrain::ProbeResult probe() override {
    plugtrain::DeviceInfo d;
    d.index = 0;
    d.name = "device of the sdk " + kTag + " plugin";
    d.total_memory_bytes = 3000000000 + N;
    d.free_memory_bytes = 1000000000 + N;
    d.capability = "capability of the sdk " + kTag + " plugin";
    d.details = {{"built with", "sdk " + kTag + " headers, unchanged"}, {"n", std::to_string(N)}};
    plugtrain::ProbeResult r;
    r.code = plugtrain::ProbeCode::usable;
    r.message = "usable: the sdk " + kTag + " plugin";
    r.devices = {d};
    r.avoid_in_auto = "the sdk " + kTag + " plugin is for tests only";
    return r;
  }

  plugtrain::LoaderConfig loader_config(const std::vector<int>&) override {
    plugtrain::LoaderConfig l;
    l.workers = 1;
    l.pin_memory = false;  // pinning needs a CUDA runtime
    l.non_blocking = true;
    l.prefetch_depth = 3;
    l.why = "loader of the sdk " + kTag + " plugin";
    return l;
  }

  plugtrain::MultiDevicePlan plan_multi_device(const plugtrain::MultiDeviceRequest& request) override {
    plugtrain::MultiDevicePlan p;
    p.strategy = plugtrain::Strategy::single;
    p.devices = {request.devices.empty() ? 0 : request.devices.front()};
    p.collective = "none";
    p.warnings = {"planned by the sdk " + kTag + " plugin"};
    return p;
  }

  plugtrain::MemoryInfo memory(int device) override {
    if (device != 0) throw std::runtime_error("no device " + std::to_string(device));
    plugtrain::MemoryInfo m;
    m.total_bytes = 7000000000 + N;
    m.free_bytes = 5000000000 + N;
    m.process_used_bytes = 100000000 + N;
    m.process_peak_bytes = 200000000 + N;
    m.reserved_bytes = 300000000 + N;
    m.oom_events = N;
    m.note = "memory of the sdk " + kTag + " plugin";
    return m;
  }

#if PLUGTRAIN_SDK_ABI_MINOR >= 1
  // 3.1's calls; the host must not make them on a 3.0 plugin, whose table has no such slots.
  void release_cached_memory(int) override { ++released_; }
  bool reset_peak_memory(int) override { return true; }

 private:
  std::atomic<int> released_{0};
#endif
};

}  // namespace

PLUGTRAIN_BACKEND_PLUGIN(OldSdkBackend, "sdk" TEST_SDK, "1.0." TEST_SDK, "backend built with the sdk " TEST_SDK " headers")
PLUGTRAIN_TEST_EXPORT_LAYOUT(PLUGTRAIN_TEST_BACKEND_LAYOUT)
