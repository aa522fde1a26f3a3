// Choosing the backend a run trains on, and saying why.
//
// backend.name = "auto": the first usable backend in `prefer` order — by default every loaded
// backend from the highest priority its plugin declares down (cuda, mps, cpu for the bundled
// ones) — that is not disabled; one line per skipped backend with its reason, then the choice.
// A backend whose probe asks automatic selection to pass it over (MPS on M1/M2) is skipped
// unless the experiment names it in backend.force.
// A named backend must be usable: its reason is the error, never a silent fallback.
#pragma once

#include <string>
#include <vector>

#include "config/experiment.h"
#include "plugins/plugin_host.h"

namespace plugtrain {

struct BackendChoice {
  BackendHandle* backend = nullptr;
  std::vector<std::string> reasons;  // what a person reads: skipped ..., chose ...
};

// What the command line adds to the experiment's own [backend] settings.
struct SelectionLimits {
  bool host_cpu_only = false;        // --no-gpu: every backend that is not the host CPU is disabled
  std::vector<std::string> disable;  // e.g. --no-mps
};

// The automatic order: `prefer` when set, else every loaded backend by priority (ties by name).
std::vector<std::string> automatic_order(PluginHost& host, const Experiment& experiment);

// Throws Error with one line when no backend can be used.
BackendChoice select_backend(PluginHost& host, const Experiment& experiment, const SelectionLimits& limits = {});

}  // namespace plugtrain
