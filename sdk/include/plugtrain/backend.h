// plugtrain SDK 5 — the Backend interface a compute-backend plugin implements.
//
// A backend says what its devices can do (capabilities) and answers four questions about its
// hardware: probe (is it usable, which devices), loader config (how to feed it data),
// multi-device plan (how to spread over devices) and memory (how much there is and how much
// this process uses). The host knows no device by name: everything it treats differently per
// device comes from these answers, and every call is wrapped so an exception thrown here becomes
// an error naming the plugin rather than a crash of the host.
//
// Each answer is one value the backend returns (Capabilities, ProbeResult, ...). The host takes
// plugins of exactly its own SDK version (abi.h), as it takes them only for exactly its own
// LibTorch, so these structs cross the boundary as they are.
//
// This header needs no LibTorch library at link time (only <torch/version.h> for the
// handshake macro), so probing stays cheap.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plugtrain/plugin.h"

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
  // and the c10d collective its ddp uses: "gloo", or one this plugin offers through the
  // extension "plugtrain.collective" (collective.h). Shown by `plugtrain plugins`; the plan of a
  // run is still asked.
  std::vector<Strategy> strategies = {Strategy::single};
  std::string collective = "gloo";
  // The environment variable that limits which of its devices a process sees (device i of the
  // probe is then its device 0), so a sweep can give each trial its own device. Empty: none.
  std::string visible_devices_variable;
  // LibTorch's profiler (Kineto) activity that records this device's kernels, as LibTorch
  // names it in lower case ("cuda", "xpu", "mtia", "privateuse1"). Empty: the CPU's only.
  std::string profiler_activity;
  // The precisions autocast really computes in on this device, from "bf16" and "fp16" (a
  // device without autocast kernels of its own gives none, and the host refuses those
  // precisions when it validates the run).
  std::vector<std::string> autocast_precisions = {"bf16", "fp16"};
};

// What a backend has counted in this process so far. The host asks once per training step (so
// keep the answer cheap: atomics, and the maps only when `details` is asked) and reports the
// differences: the waits per step (the epoch line's device figures, summary.json's
// "host_syncs") and which operators fell back to the CPU.
struct RuntimeCounts {
  // The host's waits for the device: a step that reads a device value on the host
  // (`loss.item()`, a copy to the CPU, `nonzero`, a blocking copy to the device, an explicit
  // synchronisation) stalls the host until the device's queue drains, and breaks recorded
  // graphs. Count what a real device of yours would wait on, not what an emulation does
  // internally. nullopt: this backend cannot count them.
  std::optional<std::uint64_t> host_syncs;
  // With details: the same waits by cause, an operator ("aten::_local_scalar_dense",
  // "aten::nonzero") or a kind of transfer ("copy to the host", "blocking copy to the device",
  // "device synchronisation"); the counts sum to host_syncs.
  std::map<std::string, std::uint64_t> host_syncs_by_cause;
  // With details: the operators that ran on the host CPU because this device has no kernel of
  // its own (a boxed CPU fallback, as PrivateUse1 backends use), each with how often it ran. The
  // host prints them: a silent fallback is the slowest way to train.
  std::map<std::string, std::uint64_t> cpu_fallbacks;
};

// A recording of device work that can be run again with no host work per kernel
// (CUDA graphs). The host uses it for whole training steps: `work` reads its inputs from
// tensors the host refills before each replay and leaves its outputs in tensors it keeps.
class GraphCapture {
 public:
  virtual ~GraphCapture() = default;
  // Runs `work` now, eagerly, the way a capture will record it (CUDA: on a side stream that
  // waits for the current one and is waited for). Such warm-up runs come before capture.
  virtual void warm_up(const std::function<void()>& work) = 0;
  // Records `work` without running it. An exception from `work`, or a capture the device
  // refuses (an operation that waits for the host, say), ends the capture and is thrown,
  // with its reason; the object can then not replay.
  virtual void capture(const std::function<void()>& work) = 0;
  // Runs the recording once, ordered after the work already queued on the current stream.
  virtual void replay() = 0;
};

// Implemented by the plugin.
class Backend {
 public:
  virtual ~Backend() = default;

  // Constant for the life of the plugin; may be asked before probe and on unusable backends.
  virtual Capabilities capabilities() const = 0;

  // Cheap, side-effect free, creates no device context. Must not abort the process.
  virtual ProbeResult probe() = 0;

  virtual LoaderConfig loader_config(const std::vector<int>& devices) = 0;

  // How a request for `devices` with `strategy` is served. A backend that cannot do what is
  // asked narrows the plan and says so in warnings (never silently).
  virtual MultiDevicePlan plan_multi_device(Strategy strategy, const std::vector<int>& devices) = 0;

  virtual MemoryInfo memory(int device) = 0;

  // Gives memory a caching allocator holds but does not use back to the device, as
  // torch.cuda.empty_cache() does. Called after an out-of-memory error, before the host
  // retries with a smaller batch.
  virtual void release_cached_memory(int device) { (void)device; }

  // Starts a new peak: from now on the process peak is the highest use since this call
  // (torch.cuda.reset_peak_memory_stats). The automatic batch size measures its trial steps
  // this way. False: this backend cannot, and its peak covers the whole process.
  virtual bool reset_peak_memory(int device) {
    (void)device;
    return false;
  }

  // A graph recorder for `device`, or null with `why_not` (one line) when this backend cannot
  // record one there (the default: no graphs). Cheap: it records nothing yet.
  virtual std::unique_ptr<GraphCapture> make_graph_capture(int device, std::string& why_not) {
    (void)device;
    why_not = "this backend does not record device graphs";
    return nullptr;
  }

  // What this backend has counted so far (RuntimeCounts); `details`: with the maps too.
  virtual RuntimeCounts runtime_counts(bool details) {
    (void)details;
    return {};
  }

  // The optional parts a backend offers by name and version, or null: the host then uses the
  // documented default. One today: collective.h's "plugtrain.collective" (its own c10d
  // collective, e.g. NCCL).
  virtual void* extension(const char* name, std::uint32_t version) {
    (void)name;
    (void)version;
    return nullptr;
  }
};

}  // namespace plugtrain

// PLUGTRAIN_BACKEND_PLUGIN(MyBackend, "name", "1.0.0", "one line"): a plugin with one backend and
// nothing else. Use once, at global scope, in one source file of the plugin.
#define PLUGTRAIN_BACKEND_PLUGIN(CLASS, NAME, VERSION, DESCRIPTION)                                   \
  namespace plugtrain_plugin_export {                                                                \
  void register_backend(::plugtrain::Registrar& host) { host.add_backend(std::make_unique<CLASS>()); } \
  }                                                                                                   \
  PLUGTRAIN_PLUGIN(plugtrain_plugin_export::register_backend, PLUGTRAIN_KIND_BACKEND, NAME, VERSION, DESCRIPTION)
