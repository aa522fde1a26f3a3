// The MPS availability rules, checked on Linux with injected platform facts.
// ctest-label: unit
#include <gtest/gtest.h>

#include "platform_facts.h"

namespace plugtrain::mps {
namespace mps_policy_test {

PlatformFacts mac(int major, int minor, const std::string& arch, const std::string& chip, bool torch_mps) {
  PlatformFacts f;
  f.os = "macOS";
  f.os_major = major;
  f.os_minor = minor;
  f.arch = arch;
  f.chip = chip;
  f.torch_has_mps = torch_mps;
  return f;
}

TEST(MpsAvailability, LinuxIsUnsupportedPlatform) {
  PlatformFacts f;
  f.os = "Linux";
  f.arch = "x86_64";
  auto r = mps_availability(f);
  EXPECT_EQ(r.code, ProbeCode::unsupported_platform);
  EXPECT_NE(r.message.find("MPS needs macOS"), std::string::npos);
}

TEST(MpsAvailability, IntelMacIsUnsupported) {
  auto r = mps_availability(mac(14, 0, "x86_64", "Intel Core i9", true));
  EXPECT_EQ(r.code, ProbeCode::unsupported_platform);
  EXPECT_NE(r.message.find("Intel Mac"), std::string::npos);
}

TEST(MpsAvailability, OldMacOSIsUnsupported) {
  auto r = mps_availability(mac(12, 2, "arm64", "Apple M1", true));
  EXPECT_EQ(r.code, ProbeCode::unsupported_platform);
  EXPECT_NE(r.message.find("12.3"), std::string::npos);
}

TEST(MpsAvailability, LibTorchWithoutMpsIsNotBuilt) {
  EXPECT_EQ(mps_availability(mac(14, 1, "arm64", "Apple M2", false)).code, ProbeCode::not_built);
}

TEST(MpsAvailability, AppleSiliconWithMpsIsUsable) {
  auto r = mps_availability(mac(15, 0, "arm64", "Apple M3", true));
  EXPECT_EQ(r.code, ProbeCode::usable);
  EXPECT_NE(r.message.find("Apple M3"), std::string::npos);
}

TEST(MpsAvailability, ThisMachineAgreesWithItsOwnFacts) {
  const PlatformFacts here = current_platform();
#if !defined(__APPLE__)
  EXPECT_EQ(here.os, "Linux");
  EXPECT_FALSE(mps_availability(here).usable());
#endif
}

TEST(MpsPolicy, M1AndM2AreAvoidedInAutomaticSelection) {
  for (const char* chip : {"Apple M1", "Apple M1 Pro", "Apple M2 Max"}) {
    auto r = mps_availability(mac(14, 0, "arm64", chip, true));
    EXPECT_TRUE(r.usable()) << chip;
    ASSERT_TRUE(r.avoid_in_auto.has_value()) << chip;
    EXPECT_NE(r.avoid_in_auto->find("CPU is often faster"), std::string::npos);
  }
}

TEST(MpsPolicy, M3AndLaterAreChosenNormally) {
  for (const char* chip : {"Apple M3", "Apple M4 Pro", "Apple M10"}) {
    auto r = mps_availability(mac(15, 0, "arm64", chip, true));
    EXPECT_TRUE(r.usable()) << chip;
    EXPECT_FALSE(r.avoid_in_auto.has_value()) << chip;
  }
}

}  // namespace mps_policy_test
}  // namespace plugtrain::mps
