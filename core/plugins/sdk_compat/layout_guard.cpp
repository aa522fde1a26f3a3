// Compile-time guard: today's SDK headers keep the layouts released plugins were built with.
// A field added to a struct that crosses by value fails the host's build here, with the rule,
// instead of corrupting memory when an older plugin answers (docs/plugins.md, "Versioning
// rules"). Size and alignment catch an appended or removed field, a changed type and most
// reorderings; tests/sdk_versions_test.cpp compares the same frozen copies with what the
// released headers compile to.
#include <type_traits>

#include "plugins/sdk_compat/frozen_v3.h"
#include "plugtrain/backend.h"
#include "plugtrain/dataset.h"
#include "plugtrain/model.h"
#include "plugtrain/task.h"

namespace plugtrain::sdk_compat {
namespace {

template <class Today, class Frozen>
constexpr bool same_layout = sizeof(Today) == sizeof(Frozen) && alignof(Today) == alignof(Frozen);

#define PLUGTRAIN_FROZEN_LAYOUT(TODAY, FROZEN)                                                    \
  static_assert(same_layout<TODAY, FROZEN>, #TODAY " crosses the plugin boundary by value, so its " \
                "layout is frozen: give a new fact a new virtual call appended with a default "   \
                "(docs/plugins.md, Versioning rules), or keep a frozen copy per shape and convert")

// backend.h
PLUGTRAIN_FROZEN_LAYOUT(DeviceInfo, v3::DeviceInfo);
PLUGTRAIN_FROZEN_LAYOUT(ProbeResult, v3::ProbeResult);
PLUGTRAIN_FROZEN_LAYOUT(LoaderConfig, v3::LoaderConfig);
PLUGTRAIN_FROZEN_LAYOUT(MultiDeviceRequest, v3::MultiDeviceRequest);
PLUGTRAIN_FROZEN_LAYOUT(MultiDevicePlan, v3::MultiDevicePlan);
PLUGTRAIN_FROZEN_LAYOUT(MemoryInfo, v3::MemoryInfo);
// 3.0 plugins are converted (capabilities_v3_0.cpp); from 3.1 on the host calls with today's.
PLUGTRAIN_FROZEN_LAYOUT(Capabilities, v3::Capabilities_3_1);

// options.h and model.h
static_assert(std::is_same_v<OptionValue, v3::OptionValue>, "OptionValue crosses the boundary: frozen");
PLUGTRAIN_FROZEN_LAYOUT(OptionSpec, v3::OptionSpec);
PLUGTRAIN_FROZEN_LAYOUT(OptionRule, v3::OptionRule);
PLUGTRAIN_FROZEN_LAYOUT(Options, v3::Options);
PLUGTRAIN_FROZEN_LAYOUT(ModelInputs, v3::ModelInputs);
PLUGTRAIN_FROZEN_LAYOUT(ModelSpec, v3::ModelSpec);

// dataset.h (3.5)
PLUGTRAIN_FROZEN_LAYOUT(DatasetSplit, v3::DatasetSplit);
PLUGTRAIN_FROZEN_LAYOUT(LoadedDataset, v3::LoadedDataset);
PLUGTRAIN_FROZEN_LAYOUT(DatasetRequest, v3::DatasetRequest);
PLUGTRAIN_FROZEN_LAYOUT(DatasetSpec, v3::DatasetSpec);
static_assert(sizeof(DatasetTargets) == sizeof(int), "DatasetTargets crosses as an int");

PLUGTRAIN_FROZEN_LAYOUT(DatasetFields, v3::DatasetFields);  // 3.6
PLUGTRAIN_FROZEN_LAYOUT(DatasetReadSettings, v3::DatasetReadSettings);  // 3.7
PLUGTRAIN_FROZEN_LAYOUT(DatasetReadSplit, v3::DatasetReadSplit);
PLUGTRAIN_FROZEN_LAYOUT(DatasetRead, v3::DatasetRead);
PLUGTRAIN_FROZEN_LAYOUT(DatasetValidation, v3::DatasetValidation);  // 3.8
static_assert(int(DatasetTargets::as_task) == 5, "DatasetTargets values are only appended");

// task.h (3.6)
PLUGTRAIN_FROZEN_LAYOUT(TaskMetric, v3::TaskMetric);
PLUGTRAIN_FROZEN_LAYOUT(TaskData, v3::TaskData);
PLUGTRAIN_FROZEN_LAYOUT(TaskSpec, v3::TaskSpec);
static_assert(sizeof(MetricGoal) == sizeof(int) && sizeof(TaskPass) == sizeof(int), "MetricGoal and TaskPass cross as ints");
static_assert(int(MetricGoal::maximize) == 0 && int(MetricGoal::minimize) == 1 && int(TaskPass::training) == 0 &&
                  int(TaskPass::evaluation) == 1,
              "MetricGoal's and TaskPass's values are frozen");

#undef PLUGTRAIN_FROZEN_LAYOUT

// Enumerators cross as integers: a value may be appended (and then sent to a plugin only when
// its minor knows it), never renumbered.
static_assert(int(ProbeCode::usable) == 0 && int(ProbeCode::libraries_missing) == 1 && int(ProbeCode::no_driver) == 2 &&
                  int(ProbeCode::driver_too_old) == 3 && int(ProbeCode::no_device) == 4 &&
                  int(ProbeCode::unsupported_platform) == 5 && int(ProbeCode::not_built) == 6 &&
                  int(ProbeCode::error) == 7,
              "ProbeCode's values are frozen");
static_assert(int(Strategy::single) == 0 && int(Strategy::dp) == 1 && int(Strategy::ddp) == 2,
              "Strategy's values are frozen");
static_assert(int(OptionType::integer) == 0 && int(OptionType::real) == 1 && int(OptionType::boolean) == 2 &&
                  int(OptionType::string) == 3 && int(OptionType::integer_list) == 4 &&
                  int(OptionType::real_list) == 5,
              "OptionType's values are frozen");
static_assert(std::is_same_v<std::underlying_type_t<ProbeCode>, int> && std::is_same_v<std::underlying_type_t<Strategy>, int> &&
                  std::is_same_v<std::underlying_type_t<OptionType>, int>,
              "the enums' sizes are frozen");

}  // namespace
}  // namespace plugtrain::sdk_compat
