// The test plugins built against released SDK headers (tests/plugins/old_sdk_backend.cpp,
// old_sdk_models.cpp) and the values each gives: the tests expect exactly these.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace plugtrain::testing {

struct OldSdkPlugin {
  std::string tag;              // "30", "30ec94635", "30ffd2fcf", "32"
  std::uint64_t number = 0;     // the plugin's TEST_SDK_NUMBER, part of its numbers
  int minor = 0;                // the SDK ABI minor its headers say
  int capability_fields = 6;    // the fields of Capabilities its headers had

  std::filesystem::path folder() const { return std::filesystem::path(PLUGTRAIN_TEST_PLUGIN_DIR) / ("sdk" + tag); }
  std::string backend() const { return "sdk" + tag; }
  std::string models() const { return "sdk" + tag + "models"; }
  std::string model() const { return "sdk" + tag + "_mlp"; }

  std::string collective() const { return "collective of the sdk " + tag + " plugin"; }
  std::string visible_devices_variable() const {
    return capability_fields >= 7 ? "SDK" + tag + "_VISIBLE_DEVICES_FOR_THIS_TEST" : "";
  }
  std::string profiler_activity() const {
    return capability_fields >= 8 ? "profiler activity of the sdk " + tag + " plugin" : "";
  }
  std::string device_name() const { return "device of the sdk " + tag + " plugin"; }
  std::string capability() const { return "capability of the sdk " + tag + " plugin"; }
  std::map<std::string, std::string> details() const {
    return {{"built with", "sdk " + tag + " headers, unchanged"}, {"n", std::to_string(number)}};
  }
  std::string plan_warning() const { return "planned by the sdk " + tag + " plugin"; }
  std::string memory_note() const { return "memory of the sdk " + tag + " plugin"; }
};

// SDK 3.0 as released (27dd373), and 3.2 (1a75816): a backend and a models plugin each.
inline OldSdkPlugin sdk30() { return {"30", 30, 0, 6}; }
inline OldSdkPlugin sdk32() { return {"32", 32, 2, 8}; }

// Every backend: also main after 3.0, still saying minor 0 with seven (ec94635) and eight
// (ffd2fcf) Capabilities fields.
inline std::vector<OldSdkPlugin> old_sdk_backends() {
  return {sdk30(), {"30ec94635", 301, 0, 7}, {"30ffd2fcf", 302, 0, 8}, sdk32()};
}

}  // namespace plugtrain::testing
