#include "run/run_data.h"

#include <utility>

#include "data/from_experiment.h"
#include "run/data_splits.h"
#include "run/validate.h"

namespace plugtrain {

data::DataOptions run_data_options(const ValidatedRun& run) {
  data::DataOptions options = data::data_options(run.experiment);
  // Synthetic data is made for the task.
  options.task_targets = run.task ? run.task->target_kind : DatasetTargets::class_index;
  if (run.dataset) {
    options.dataset = &run.dataset->spec;
    options.plugin = run.dataset->plugin;
  }
  return options;
}

RunData::RunData(data::DataOptions options, Experiment experiment)
    : options_(std::move(options)), experiment_(std::move(experiment)) {}

namespace {

// Byte images read before the run folder was known: normalised by the statistics stored in it.
void adopt_stored(data::LoadedData& d, const data::DataOptions& options) {
  if (!d.data.train.bytes()) return;  // synthetic floats carry no statistics
  std::string note;
  const std::optional<data::Normalization> settled =
      data::settled_normalization(options, d.data.train.sample_shape.at(0), note);
  if (!settled) return;
  d.data.train.normalization = d.data.test.normalization = d.data.val.normalization = *settled;
  for (std::string& line : d.notes)  // the computed statistics' line gives way to the stored ones'
    if (line.rfind("normalize:", 0) == 0) line = note;
}

}  // namespace

data::LoadedData RunData::get(const std::optional<data::Normalization>& stored,
                              const std::filesystem::path& stored_from) {
  data::DataOptions options = options_;
  options.stored = stored;
  options.stored_from = stored_from.string();
  if (!loaded_) {
    data::LoadedData d = data::load_dataset(options);
    settle_splits(experiment_, d);
    loaded_ = std::move(d);
    return *loaded_;
  }
  data::LoadedData copy = *loaded_;
  if (stored) adopt_stored(copy, options);
  return copy;
}

}  // namespace plugtrain
