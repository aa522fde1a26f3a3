// The types that cross the plugin boundary by value, as the released SDK 3.x headers laid them
// out — frozen copies the host keeps so that it can still talk to a plugin built years ago.
//
// A plugin compiled against an older header constructs ITS struct in storage the host provides
// (a returned struct goes through a hidden pointer) and reads the host's structs with ITS idea
// of their layout. So a struct that gained a field after a plugin was built is not just
// missing a value: the host would read, copy and destroy bytes nobody constructed. The rule
// (docs/plugins.md, "Versioning rules"): a by-value struct is frozen at its release, and a new
// fact arrives through a new virtual call appended with a default. layout_guard.cpp holds
// today's SDK to these copies at compile time; tests/sdk_versions_test.cpp holds these copies
// to the released headers themselves (tests/sdk_headers/).
//
// The one struct that grew before the rule was written is Capabilities: SDK 3.0 released it
// with six fields (27dd373); main then appended visible_devices_variable (ec94635) and
// profiler_activity (ffd2fcf) while still saying minor 0, and 3.1 shipped the eight. The host
// reads every minor-0 plugin through capabilities_v3_0.cpp, which tells the three apart.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "plugtrain/backend.h"
#include "plugtrain/options.h"

namespace plugtrain {
class Model;
}

namespace plugtrain::sdk_compat::v3 {

// The enums cross as their integers: layout_guard.cpp pins every enumerator's value.
using ::plugtrain::OptionType;
using ::plugtrain::ProbeCode;
using ::plugtrain::Strategy;

// ---- backend.h, SDK 3.0 (unchanged through 3.4) ----

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::optional<std::uint64_t> total_memory_bytes;
  std::optional<std::uint64_t> free_memory_bytes;
  std::string capability;
  std::map<std::string, std::string> details;
};

struct ProbeResult {
  ProbeCode code = ProbeCode::error;
  std::string message;
  std::vector<DeviceInfo> devices;
  std::optional<std::string> avoid_in_auto;
};

struct LoaderConfig {
  int workers = 0;
  bool pin_memory = false;
  bool non_blocking = false;
  int prefetch_depth = 1;
  std::string why;
};

struct MultiDeviceRequest {
  std::vector<int> devices;
  Strategy strategy = Strategy::single;
};

struct MultiDevicePlan {
  Strategy strategy = Strategy::single;
  std::vector<int> devices;
  std::string collective = "none";
  std::vector<std::string> warnings;
};

struct MemoryInfo {
  std::optional<std::uint64_t> total_bytes;
  std::optional<std::uint64_t> free_bytes;
  std::optional<std::uint64_t> process_used_bytes;
  std::optional<std::uint64_t> process_peak_bytes;
  std::optional<std::uint64_t> reserved_bytes;
  std::optional<std::uint64_t> oom_events;
  std::string note;
};

// ---- Capabilities, in each shape a plugin may have been built with ----

// SDK 3.0 as released (27dd373).
struct Capabilities_3_0 {
  std::string device_type;
  bool host_cpu = false;
  bool float64 = true;
  int priority = 0;
  std::vector<Strategy> strategies = {Strategy::single};
  std::string collective = "gloo";
};

// main at ec94635 (still minor 0): one field more.
struct Capabilities_3_0_ec94635 {
  std::string device_type;
  bool host_cpu = false;
  bool float64 = true;
  int priority = 0;
  std::vector<Strategy> strategies = {Strategy::single};
  std::string collective = "gloo";
  std::string visible_devices_variable;
};

// main at ffd2fcf (still minor 0), and SDK 3.1 through 3.4: the shape frozen since.
struct Capabilities_3_1 {
  std::string device_type;
  bool host_cpu = false;
  bool float64 = true;
  int priority = 0;
  std::vector<Strategy> strategies = {Strategy::single};
  std::string collective = "gloo";
  std::string visible_devices_variable;
  std::string profiler_activity;
};

// ---- options.h and model.h, SDK 3.0 (unchanged through 3.4; OptionRule since 3.2) ----

using OptionValue = std::variant<std::int64_t, double, bool, std::string, std::vector<std::int64_t>,
                                 std::vector<double>>;

struct OptionSpec {
  std::string name;
  OptionType type = OptionType::integer;
  OptionValue default_value;
  std::string doc;
};

// SDK 3.2. (The SDK's own type has its builder functions and a private section of functions
// only: no data member is private, so its layout is this.)
struct OptionRule {
  std::string option;
  std::optional<double> min, max;
  bool min_exclusive = false, max_exclusive = false;
  std::vector<std::string> choices;
  std::optional<std::size_t> min_length, max_length;
};

// The SDK's Options holds one private member: this map.
struct Options {
  std::map<std::string, OptionValue> values;
};

struct ModelInputs {
  std::vector<std::int64_t> input_shape;
  std::int64_t num_classes = 0;
};

struct ModelSpec {
  std::string name;
  std::string description;
  std::vector<OptionSpec> options;
  std::function<std::shared_ptr<Model>(const ModelInputs&, const Options&)> factory;
};

// dataset.h, since 3.5 (a tensor is one intrusive pointer).
struct DatasetSplit {
  void* inputs;
  void* targets;
};
struct LoadedDataset {
  DatasetSplit train, test;
  std::int64_t num_classes;
  std::vector<std::string> class_names;
  std::string source;
};
struct DatasetRequest {
  std::string path;
  std::uint64_t seed;
};
struct DatasetSpec {
  std::string name;
  std::string description;
  int targets;
  std::vector<OptionSpec> options;
  std::function<LoadedDataset(const DatasetRequest&, const Options&)> factory;
};

// dataset.h, since 3.6.
struct DatasetFields {
  std::map<std::string, void*> train, test;
};

// dataset.h, since 3.7.
struct DatasetReadSettings {
  std::int64_t image_size;
  int cache;
  int decode_threads;
  bool skip_bad;
  int task_targets;
};
struct DatasetReadSplit {
  void* inputs;
  std::function<void(std::int64_t, std::uint8_t*)> decode;
  std::vector<std::int64_t> sample_shape;
  void* targets;
};
struct DatasetRead {
  DatasetReadSplit train, test;
  int targets;
  std::int64_t num_classes;
  std::vector<std::string> class_names;
  std::string source;
  std::string test_split;
  std::vector<std::string> notes;
};

// dataset.h, since 3.8.
struct DatasetValidation {
  DatasetReadSplit val;
  std::string split;
};

// task.h, since 3.6.
struct TaskMetric {
  std::string name;
  int goal;
  std::string doc;
};
struct TaskData {
  std::int64_t num_classes;
  std::vector<std::int64_t> target_shape;
  std::vector<std::string> class_names;
};
struct TaskSpec {
  std::string name;
  std::string description;
  int targets;
  std::vector<OptionSpec> options;
  std::vector<TaskMetric> training_metrics, evaluation_metrics;
  std::string loss_waits_for_host;
  std::function<void*(const TaskData&, const Options&)> factory;
};

}  // namespace plugtrain::sdk_compat::v3
