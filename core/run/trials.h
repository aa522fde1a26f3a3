// Stage 2 of a run: the trial steps. What only a few real training steps can tell, measured on
// the validated run and its data as read once (run/run_data.h), before the plan decides:
//   backend.select = "fastest"  each usable backend timed (run/fastest_backend.h)
//   data.batch_size = "auto"    the largest batch that fits the device (run/batch_search.h)
// Each trial builds a trainer without outputs (run/trial_steps.h). A run that asks for neither
// runs no step here. The plan (run/plan.h) then takes these results as they are.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "distributed/world.h"
#include "select/backend_selection.h"

namespace plugtrain {

struct ValidatedRun;

struct TrialResults {
  // select = "fastest" without a launcher (under one every rank must agree, so there the
  // priority order decides): the backend measured fastest, and the lines that say so.
  std::optional<BackendChoice> fastest;
  // data.batch_size = "auto": per device, as the search found it (or the run being resumed chose).
  std::optional<std::int64_t> batch_size;
  std::vector<std::string> batch_lines;  // how the size was found
};

// Whether the trial stage measures the backends for `run` under `world`.
bool measures_backends(const ValidatedRun& run, const std::optional<World>& world);

// Throws what the trials meet: Error when no backend runs, ConfigError for "auto" under a
// foreign launcher or a layout the backend cannot serve (run/device_layout.h).
TrialResults run_trials(const ValidatedRun& run, const SelectionLimits& limits, const std::optional<World>& world);

}  // namespace plugtrain
