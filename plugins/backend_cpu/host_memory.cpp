#include "host_memory.h"

#include <fstream>
#include <sstream>
#include <thread>

#if defined(__linux__)
#include <sched.h>
#endif
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__APPLE__)
#include <mach/mach.h>
#include <sys/resource.h>
#include <sys/sysctl.h>
#endif

namespace plugtrain::cpu {

namespace {

#if defined(__linux__)
// Reads "Key:   123 kB" lines from a /proc file; returns bytes.
std::optional<std::uint64_t> proc_kib_field(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) == 0 && line.size() > key.size() && line[key.size()] == ':') {
      std::istringstream fields(line.substr(key.size() + 1));
      std::uint64_t kib = 0;
      if (fields >> kib) return kib * 1024;
    }
  }
  return std::nullopt;
}
#endif

}  // namespace

SystemMemory system_memory() {
  SystemMemory m;
#if defined(__linux__)
  m.total_bytes = proc_kib_field("/proc/meminfo", "MemTotal");
  m.available_bytes = proc_kib_field("/proc/meminfo", "MemAvailable");
#elif defined(__APPLE__)
  std::uint64_t total = 0;
  std::size_t len = sizeof total;
  if (sysctlbyname("hw.memsize", &total, &len, nullptr, 0) == 0) m.total_bytes = total;
  vm_statistics64_data_t vm{};
  mach_msg_type_number_t count = HOST_VM_INFO64_COUNT;
  if (host_statistics64(mach_host_self(), HOST_VM_INFO64, reinterpret_cast<host_info64_t>(&vm), &count) ==
      KERN_SUCCESS)
    m.available_bytes = (std::uint64_t(vm.free_count) + vm.inactive_count) * vm_page_size;
#endif
  return m;
}

ProcessMemory process_memory() {
  ProcessMemory m;
#if defined(__linux__)
  m.resident_bytes = proc_kib_field("/proc/self/status", "VmRSS");
  m.peak_resident_bytes = proc_kib_field("/proc/self/status", "VmHWM");
#elif defined(__APPLE__)
  mach_task_basic_info info{};
  mach_msg_type_number_t count = MACH_TASK_BASIC_INFO_COUNT;
  if (task_info(mach_task_self(), MACH_TASK_BASIC_INFO, reinterpret_cast<task_info_t>(&info), &count) ==
      KERN_SUCCESS)
    m.resident_bytes = info.resident_size;
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) == 0) m.peak_resident_bytes = std::uint64_t(usage.ru_maxrss);  // bytes on macOS
#endif
  return m;
}

bool reset_peak_resident() {
#if defined(__linux__)
  // Since Linux 4.0: writing 5 resets VmHWM to the current resident size.
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return bool(clear);
#else
  return false;
#endif
}

void trim_heap() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

std::string cpu_model_name() {
#if defined(__linux__)
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0 || line.rfind("Model", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(colon + 1);
        name.erase(0, name.find_first_not_of(" \t"));
        return name;
      }
    }
  }
#elif defined(__APPLE__)
  char buf[256];
  std::size_t len = sizeof buf;
  if (sysctlbyname("machdep.cpu.brand_string", buf, &len, nullptr, 0) == 0) return std::string(buf);
#endif
  return "CPU";
}

int logical_cores() {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
#endif
  unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? int(n) : 1;
}

}  // namespace plugtrain::cpu
