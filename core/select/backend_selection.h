// Choosing the backend a run trains on, and saying why.
//
// backend.name = "auto": the first usable backend in `prefer` order (default cuda, mps, cpu)
// that is not disabled; one line per skipped backend with its reason, then the choice.
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

// Throws std::runtime_error with one line when no backend can be used.
BackendChoice select_backend(PluginHost& host, const Experiment& experiment);

}  // namespace plugtrain
