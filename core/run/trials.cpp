#include "run/trials.h"

#include "config/config_error.h"
#include "config/resolved_experiment.h"
#include "run/batch_search.h"
#include "run/device_layout.h"
#include "run/fastest_backend.h"
#include "run/validate.h"

namespace plugtrain {

namespace {

// data.batch_size = "auto": what the checkpoint's run chose when resuming, else a search on the
// devices the run will use.
void find_automatic_batch(const ValidatedRun& run, const BackendChoice& choice, const std::optional<World>& world,
                          TrialResults& results) {
  // Asked first: the search sizes the batch for the layout, which must hold before any step.
  const RunPlan layout = plan_layout(run, choice, world);
  if (!run.resume_from.empty()) {
    if (auto recorded = recorded_integer(run.resume_record, "data.batch_size"); recorded && *recorded > 0) {
      results.batch_lines.push_back("auto: " + std::to_string(*recorded) +
                                    " per device, as the run being resumed chose");
      results.batch_size = *recorded;
      return;
    }
  }
  // Under torchrun or Slurm each rank plans alone and could find another size; plugtrain's
  // own launcher (devices = N) searches once and gives every worker the result.
  if (world && world->world_size > 1)
    throw ConfigError(key_location(run.file, "data.batch_size") + ": data.batch_size = \"auto\" under " +
                      world->source +
                      ": every rank must train on the same batch; start the run with "
                      "backend.devices = N instead (the search then runs once), or give a number");
  const BatchSearch search = search_batch_size(run, layout);
  results.batch_lines = search.lines;
  results.batch_size = search.chosen;
}

}  // namespace

bool measures_backends(const ValidatedRun& run, const std::optional<World>& world) {
  const Experiment& e = run.experiment;
  return !e.backend.name && e.backend.select == BackendSelect::fastest && !world;
}

TrialResults run_trials(const ValidatedRun& run, const SelectionLimits& limits, const std::optional<World>& world) {
  TrialResults results;
  if (measures_backends(run, world)) results.fastest = choose_fastest(run, limits);
  if (!run.experiment.data.batch_size) {
    const BackendChoice choice = results.fastest ? *results.fastest : select_backend(*run.host, run.experiment, limits);
    find_automatic_batch(run, choice, world, results);
  }
  return results;
}

}  // namespace plugtrain
