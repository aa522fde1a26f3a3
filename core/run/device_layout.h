// The first half of a plan, shared by the trial steps (which size a batch on it) and the plan:
// what devices and processes a run uses on the backend it was given, refused early with the
// key to change when the backend cannot serve it. It starts no device work and builds nothing.
#pragma once

#include <optional>

#include "distributed/world.h"
#include "plugins/backend_handle.h"
#include "run/plan.h"
#include "run/validate.h"
#include "select/backend_selection.h"

namespace plugtrain {

// A RunPlan with the backend (`choice`), its capabilities, the devices, strategy, shard,
// processes, devices_used and rank set, and train.graphs decided when it is true (so that
// refusal comes before any work). Throws ConfigError for a device count, strategy or precision
// the backend cannot serve, DistributedError for a launcher it cannot serve.
RunPlan plan_layout(const ValidatedRun& run, const BackendChoice& choice, const std::optional<World>& world);

// train.precision bf16 or fp16 only where the backend has autocast kernels for it.
void check_precision(const ValidatedRun& run, BackendHandle& backend);

}  // namespace plugtrain
