// [backend] select = "fastest": time a few training steps of the experiment's own model, batch
// and precision on each usable backend and choose the fastest — the M1/M2 guide's "the CPU can
// beat MPS on small models", measured instead of assumed. The choice is kept per machine,
// experiment shape and plugtrain version in ${XDG_CACHE_HOME:-~/.cache}/plugtrain/fastest.json,
// so the next run does not measure again (RunRequest::measure_again, `--no-cache`, does).
#pragma once

#include <string>
#include <vector>

#include "run/run_request.h"
#include "select/backend_selection.h"

namespace plugtrain {

struct ValidatedRun;

// The candidates are the backends automatic selection would consider (usable, not disabled;
// those their plugin asks to pass over are measured too). Throws Error when none runs.
BackendChoice choose_fastest(const ValidatedRun& run, const SelectionLimits& limits);

}  // namespace plugtrain
