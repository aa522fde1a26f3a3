// Facts about the machine that decide whether MPS can work, behind a small interface so
// tests on Linux can pretend to be "macOS 14 on M2" or "an Intel Mac".
#pragma once

#include <string>

#include "plugtrain/backend.h"

namespace plugtrain::mps {

struct PlatformFacts {
  std::string os;        // "macOS", "Linux", ...
  int os_major = 0;      // e.g. 14 for macOS 14.x
  int os_minor = 0;
  std::string arch;      // "arm64", "x86_64"
  std::string chip;      // e.g. "Apple M2", "" when unknown
  bool torch_has_mps = false;  // LibTorch was built with MPS and reports it available
};

PlatformFacts current_platform();

// Whether MPS is usable on `facts`, with the coded reason when not. Pure: tested on Linux.
ProbeResult mps_availability(const PlatformFacts& facts);

}  // namespace plugtrain::mps
