// A backend's answers, asked through the SDK's sinks (backend.h) and collected into the SDK's
// value types as the host compiles them: the plugin's own structs never cross the boundary.
#pragma once

#include <vector>

#include "plugtrain/backend.h"

namespace plugtrain {

Capabilities capabilities_of(const Backend& backend);
ProbeResult probe_of(Backend& backend);
LoaderConfig loader_config_of(Backend& backend, const std::vector<int>& devices);
MultiDevicePlan plan_of(Backend& backend, Strategy strategy, const std::vector<int>& devices);
MemoryInfo memory_of(Backend& backend, int device);

}  // namespace plugtrain
