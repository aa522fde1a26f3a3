// Tasks from plugins (plugtrain/task.h, SDK 3.6) as the loop's own: a plugin's TaskSpec becomes
// a TaskDefinition whose Task forwards to the plugin's TaskFunctions, checking what comes back
// (the number of statistics and of metric values) with the task and its plugin named.
#pragma once

#include <string>
#include <vector>

#include "plugtrain/task.h"
#include "task/task_registry.h"

namespace plugtrain {

// Throws Error naming the plugin when the spec's target kind is not one this host knows.
TaskDefinition definition_from_plugin(const plugtrain::TaskSpec& spec, const std::string& plugin);

}  // namespace plugtrain
