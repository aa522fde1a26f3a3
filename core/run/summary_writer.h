// Stage 6 of a run: summary.json (written whole, atomically) and the closing lines a person
// reads — how it ended, the final and best test accuracy, how to resume after an interrupt.
#pragma once

#include <cstdint>
#include <iosfwd>

#include "config/experiment.h"
#include "run/outputs.h"
#include "run/run_request.h"

namespace plugtrain {

void write_summary(const Experiment& e, RunResult& result, std::int64_t parameters, RunOutputs& outputs);

}  // namespace plugtrain
