// The emulated accelerator's device runtime, as a vendor's would be: N devices of its own
// (PrivateUse1, under its own name), a memory pool per device with a capacity, a device guard,
// native copies to and from the CPU, and a boxed fallback that runs every other operator on
// the CPU and counts it. Its "device memory" is host memory from its own pool, so it can run
// out (PLUGTRAIN_EMU_MEMORY) while the machine has plenty.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <ATen/core/stack.h>

namespace c10 {
class OperatorHandle;
}

#ifndef EMULATED_DEVICE_NAME
#define EMULATED_DEVICE_NAME "emu"  // the name LibTorch knows the device by: emu:0, emu:1, ...
#endif

namespace emulated {

// PLUGTRAIN_EMU_DEVICES (default 1, at most 16).
int device_count();
// PLUGTRAIN_EMU_MEMORY per device: bytes, or with a K, M or G suffix (default 4G), read once.
std::uint64_t capacity_bytes();
// Why the environment is wrong, or nothing: the probe and init report it.
std::optional<std::string> configuration_error();

// The device the calling thread works on (the device guard's state).
int current_device();
void set_current_device(int device);

struct PoolStats {
  std::uint64_t allocated = 0;  // in tensors now
  std::uint64_t peak = 0;       // the most allocated since the start or the last reset
  std::uint64_t reserved = 0;   // allocated plus freed blocks the pool keeps for reuse
  std::uint64_t oom_events = 0;
};
PoolStats pool_stats(int device);
void reset_peak(int device);
void release_cached(int device);
// The device whose pool holds `data`, or -1.
int device_of_pointer(const void* data);

// Registers the device with LibTorch: its name, allocator, guard, hooks, kernels and fallback.
// Once per process; returns why it cannot (PrivateUse1 already taken), else nothing.
std::optional<std::string> register_device();
// Operators that ran on the CPU through the fallback, with their counts, and one more call of `op`.
std::map<std::string, std::uint64_t> fallback_counts();
void count_fallback(const std::string& op);

// The host waits a real device would make (host_waits.cpp): counted outside emulation only.
struct EmulationScope {  // the emulator's own copies within it are not counted
  EmulationScope();
  ~EmulationScope();
  EmulationScope(const EmulationScope&) = delete;
  EmulationScope& operator=(const EmulationScope&) = delete;
};
void count_host_wait(const std::string& cause);
// The operator's result size depends on the device's values (nonzero, a boolean mask, ...).
void count_if_reads_values(const c10::OperatorHandle& op, const torch::jit::Stack& stack);
std::uint64_t host_waits();
std::map<std::string, std::uint64_t> host_waits_by_cause();

// Parts of register_device, each in its own file.
void register_allocator();
void register_guard_and_hooks();
void register_kernels();
void register_host_kernels();

}  // namespace emulated
