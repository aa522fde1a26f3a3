#include "platform_facts.h"

#include <sys/utsname.h>

#include <cstdio>
#include <regex>

#include <torch/mps.h>

#if defined(__APPLE__)
#include <sys/sysctl.h>
#endif

namespace plugtrain::mps {

namespace {

#if defined(__APPLE__)
std::string sysctl_string(const char* name) {
  char buf[256] = {0};
  std::size_t len = sizeof buf;
  if (sysctlbyname(name, buf, &len, nullptr, 0) != 0) return "";
  return std::string(buf);
}
#endif

}  // namespace

PlatformFacts current_platform() {
  PlatformFacts f;
  utsname u{};
  if (uname(&u) == 0) f.arch = u.machine;
#if defined(__APPLE__)
  f.os = "macOS";
  std::sscanf(sysctl_string("kern.osproductversion").c_str(), "%d.%d", &f.os_major, &f.os_minor);
  f.chip = sysctl_string("machdep.cpu.brand_string");
#elif defined(__linux__)
  f.os = "Linux";
  std::sscanf(u.release, "%d.%d", &f.os_major, &f.os_minor);
#else
  f.os = u.sysname;
#endif
  f.torch_has_mps = torch::mps::is_available();
  return f;
}

ProbeResult mps_availability(const PlatformFacts& f) {
  const std::string where = f.os + " " + std::to_string(f.os_major) + "." + std::to_string(f.os_minor) + " " + f.arch;
  if (f.os != "macOS") return {ProbeCode::unsupported_platform, "MPS needs macOS on Apple Silicon; this is " + where, {}};
  if (f.arch != "arm64")
    return {ProbeCode::unsupported_platform, "MPS needs an Apple Silicon (arm64) Mac; this is an Intel Mac (" + where + ")", {}};
  // PyTorch's MPS backend needs macOS 12.3 or newer.
  if (f.os_major < 12 || (f.os_major == 12 && f.os_minor < 3))
    return {ProbeCode::unsupported_platform, "MPS needs macOS 12.3 or newer; this is " + where, {}};
  if (!f.torch_has_mps)
    return {ProbeCode::not_built, "this LibTorch was built without MPS or reports it unavailable", {}};
  ProbeResult usable{ProbeCode::usable, "Metal GPU of " + (f.chip.empty() ? std::string("this Mac") : f.chip), {}};
  // The original guides' M1/M2 policy: MPS is often slower than the CPU there for small
  // models, so automatic selection prefers the CPU unless the experiment forces MPS.
  if (std::regex_search(f.chip, std::regex(R"(\bM[12]\b)")))
    usable.avoid_in_auto = "on " + f.chip +
                           " the CPU is often faster than MPS for small models; force MPS with [backend] "
                           "name = \"mps\" or force_mps = true";
  return usable;
}

}  // namespace plugtrain::mps
