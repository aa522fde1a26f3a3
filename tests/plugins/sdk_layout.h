// What a released SDK's boundary types compile to, exported by the test plugins built against
// that SDK's own headers (old_sdk_module in CMakeLists.txt): one "Name size align" line per
// type. tests/sdk_versions_test.cpp compares it with the host's frozen copies
// (core/plugins/sdk_compat/frozen_v3.h).
#pragma once

#include <string>

#define PLUGTRAIN_TEST_LAYOUT(T)                                                                     \
  (std::string(#T " ") + std::to_string(sizeof(::plugtrain::T)) + " " + std::to_string(alignof(::plugtrain::T)) + \
   "\n")

// PLUGTRAIN_TEST_EXPORT_LAYOUT(text): exports const char* plugtrain_test_sdk_layout().
#define PLUGTRAIN_TEST_EXPORT_LAYOUT(TEXT)                                      \
  extern "C" PLUGTRAIN_EXPORT const char* plugtrain_test_sdk_layout(void) {    \
    static const std::string text = TEXT;                                      \
    return text.c_str();                                                       \
  }

#define PLUGTRAIN_TEST_BACKEND_LAYOUT                                                                 \
  PLUGTRAIN_TEST_LAYOUT(Capabilities) + PLUGTRAIN_TEST_LAYOUT(DeviceInfo) + PLUGTRAIN_TEST_LAYOUT(ProbeResult) + \
      PLUGTRAIN_TEST_LAYOUT(LoaderConfig) + PLUGTRAIN_TEST_LAYOUT(MultiDeviceRequest) +              \
      PLUGTRAIN_TEST_LAYOUT(MultiDevicePlan) + PLUGTRAIN_TEST_LAYOUT(MemoryInfo)

#define PLUGTRAIN_TEST_MODEL_LAYOUT                                                                   \
  PLUGTRAIN_TEST_LAYOUT(OptionSpec) + PLUGTRAIN_TEST_LAYOUT(Options) + PLUGTRAIN_TEST_LAYOUT(ModelInputs) + \
      PLUGTRAIN_TEST_LAYOUT(ModelSpec) + PLUGTRAIN_TEST_RULE_LAYOUT

// OptionRule came in 3.2.
#if PLUGTRAIN_SDK_ABI_MINOR >= 2
#define PLUGTRAIN_TEST_RULE_LAYOUT PLUGTRAIN_TEST_LAYOUT(OptionRule)
#else
#define PLUGTRAIN_TEST_RULE_LAYOUT std::string()
#endif
