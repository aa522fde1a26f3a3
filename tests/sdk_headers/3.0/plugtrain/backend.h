// plugtrain SDK — the Backend interface a compute-backend plugin implements.
//
// A backend says what its devices can do (capabilities) and answers four questions about its
// hardware: probe (is it usable, which devices), loader config (how to feed it data),
// multi-device plan (how to spread over devices) and memory (how much there is and how much
// this process uses). The host knows no device by name: everything it treats differently
// per device comes from these answers. The host calls these only
// after the plain-C handshake in abi.h matched, and wraps every call so an exception
// thrown here becomes an error naming the plugin rather than a crash of the host.
//
// This header needs no LibTorch library at link time (only <torch/version.h> for the
// handshake macro), so probing stays cheap.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/dll/alias.hpp>
#include <torch/version.h>

#include "plugtrain/abi.h"

namespace plugtrain {

// Why a backend is or is not usable. Stable names (to_string) appear in `plugins --json`.
enum class ProbeCode {
  usable,
  libraries_missing,     // runtime libraries cannot be loaded
  no_driver,             // no kernel driver / driver library
  driver_too_old,        // driver older than the runtime needs
  no_device,             // driver fine but no device (or all hidden)
  unsupported_platform,  // wrong OS / CPU architecture
  not_built,             // LibTorch was built without this backend
  error                  // the probe itself failed
};

inline const char* to_string(ProbeCode code) {
  switch (code) {
    case ProbeCode::usable: return "usable";
    case ProbeCode::libraries_missing: return "libraries_missing";
    case ProbeCode::no_driver: return "no_driver";
    case ProbeCode::driver_too_old: return "driver_too_old";
    case ProbeCode::no_device: return "no_device";
    case ProbeCode::unsupported_platform: return "unsupported_platform";
    case ProbeCode::not_built: return "not_built";
    case ProbeCode::error: return "error";
  }
  return "error";
}

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::optional<std::uint64_t> total_memory_bytes;
  std::optional<std::uint64_t> free_memory_bytes;  // nullopt: unknowable (e.g. unified memory)
  std::string capability;                           // e.g. "sm_90", "avx2"
  std::map<std::string, std::string> details;       // extra facts shown by `plugtrain plugins`
};

struct ProbeResult {
  ProbeCode code = ProbeCode::error;
  std::string message;  // one line for a person: why (not) usable
  std::vector<DeviceInfo> devices;
  // Usable, but automatic selection should pass it over unless the experiment forces it,
  // and say this reason (e.g. MPS on M1/M2, where the CPU is often faster for small models).
  std::optional<std::string> avoid_in_auto;
  bool usable() const { return code == ProbeCode::usable; }
};

// How the data loader should feed these devices (the original guides' table).
struct LoaderConfig {
  int workers = 0;            // background threads preparing batches
  bool pin_memory = false;    // page-locked host buffers
  bool non_blocking = false;  // asynchronous host-to-device copies
  int prefetch_depth = 1;     // batches prepared ahead of the one training
  std::string why;            // one line: why these values
};

enum class Strategy { single, dp, ddp };

inline const char* to_string(Strategy s) {
  switch (s) {
    case Strategy::single: return "single";
    case Strategy::dp: return "dp";
    case Strategy::ddp: return "ddp";
  }
  return "single";
}

struct MultiDeviceRequest {
  std::vector<int> devices;  // device indices asked for
  Strategy strategy = Strategy::single;
};

struct MultiDevicePlan {
  Strategy strategy = Strategy::single;
  std::vector<int> devices;           // the devices that will really be used
  std::string collective = "none";    // "none", "gloo", "nccl"
  std::vector<std::string> warnings;  // e.g. "MPS has no DDP: using one device"
};

struct MemoryInfo {
  std::optional<std::uint64_t> total_bytes;
  std::optional<std::uint64_t> free_bytes;  // nullopt: unknowable; `note` says why
  std::optional<std::uint64_t> process_used_bytes;  // allocated by this process (RSS on the CPU)
  std::optional<std::uint64_t> process_peak_bytes;
  std::optional<std::uint64_t> reserved_bytes;      // held by a caching allocator
  std::optional<std::uint64_t> oom_events;          // out-of-memory events so far
  std::string note;
};

// What the host needs to know about a backend's devices, asked once when the plugin loads.
// Everything the host does differently for one device than for another comes from here.
struct Capabilities {
  // The LibTorch device type this backend trains on ("cpu", "cuda", "mps", or the name a
  // PrivateUse1 backend registered).
  std::string device_type;
  // The host's own processor rather than an accelerator: what `plugtrain run --no-gpu`
  // (--no-cuda) leaves usable.
  bool host_cpu = false;
  // The device computes in float64 (MPS does not): running sums use float32 where it cannot.
  bool float64 = true;
  // Automatic selection (backend.name = "auto" with no backend.prefer) tries usable backends
  // from the highest priority down; ties go by name. The bundled ones: cuda 200, mps 100, cpu 0.
  int priority = 0;
  // How plan_multi_device can spread a run over several devices (single is always possible),
  // and the c10d collective its ddp uses: "gloo", or one this plugin exports through
  // plugtrain/collective.h. Shown by `plugtrain plugins`; the plan of a run is still asked.
  std::vector<Strategy> strategies = {Strategy::single};
  std::string collective = "gloo";
};

class Backend {
 public:
  virtual ~Backend() = default;

  // Constant for the life of the plugin; may be asked before probe and on unusable backends.
  virtual Capabilities capabilities() const = 0;

  // Cheap, side-effect free, creates no device context. Must not abort the process.
  virtual ProbeResult probe() = 0;

  virtual LoaderConfig loader_config(const std::vector<int>& devices) = 0;

  // How a request for several devices is served. A backend that cannot do what is asked
  // narrows the plan and says so in warnings (never silently).
  virtual MultiDevicePlan plan_multi_device(const MultiDeviceRequest& request) = 0;

  virtual MemoryInfo memory(int device) = 0;
};

}  // namespace plugtrain

// PLUGTRAIN_BACKEND_PLUGIN(MyBackend, "name", "1.0.0", "one line")
// Exports the handshake and the factory (Boost.DLL alias "plugtrain_create_backend").
// Use once, at global scope, in one source file of the plugin.
#define PLUGTRAIN_BACKEND_PLUGIN(CLASS, NAME, VERSION, DESCRIPTION)            \
  PLUGTRAIN_PLUGIN_INFO(PLUGTRAIN_KIND_BACKEND, NAME, VERSION, DESCRIPTION)    \
  namespace plugtrain_plugin_export {                                          \
  std::unique_ptr<::plugtrain::Backend> create_backend() {                     \
    return std::unique_ptr<::plugtrain::Backend>(new CLASS());                 \
  }                                                                            \
  }                                                                            \
  BOOST_DLL_ALIAS(plugtrain_plugin_export::create_backend, plugtrain_create_backend)
