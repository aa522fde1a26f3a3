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
std::string cpu_model_name();
int logical_cores();  // cores this process may run on (affinity), at least 1

}  // namespace plugtrain::cpu
