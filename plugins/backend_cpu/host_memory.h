// System and process memory figures for the CPU backend (Linux /proc, macOS sysctl/mach).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace plugtrain::cpu {

struct SystemMemory {
  std::optional<std::uint64_t> total_bytes;
  std::optional<std::uint64_t> available_bytes;
};

struct ProcessMemory {
  std::optional<std::uint64_t> resident_bytes;
  std::optional<std::uint64_t> peak_resident_bytes;
};

SystemMemory system_memory();
ProcessMemory process_memory();
// Starts a new peak resident size (Linux: /proc/self/clear_refs "5"); false where it cannot.
bool reset_peak_resident();
// Gives the heap's free pages back to the system (glibc malloc_trim); nothing elsewhere.
void trim_heap();
std::string cpu_model_name();
int logical_cores();  // cores this process may run on (affinity), at least 1

}  // namespace plugtrain::cpu
