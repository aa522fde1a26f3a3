// The run's data set, read from disk once per run. Validation makes the reader (nothing is read
// yet); the first stage that needs the data reads it: the trial steps (the fastest backend,
// data.batch_size = "auto", run/trials.h), else the plan when it weighs keeping the data on the
// device, else the build. Every later stage trains on the same tensors.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>

#include "config/experiment.h"
#include "data/load_dataset.h"

namespace plugtrain {

struct ValidatedRun;

// What load_dataset reads for the run: the [data] table, the plugin data set it names (with
// its [dataset] options), synthetic data made for its task.
data::DataOptions run_data_options(const ValidatedRun& run);

class RunData {
 public:
  RunData(data::DataOptions options, Experiment experiment);

  // The data with its splits settled (run/data_splits.h), read at the first call. `stored`: a
  // run folder's normalization.json (read_normalization); its statistics replace the computed
  // ones, so a resumed run normalises as it began, whichever stage read the data first.
  // A copy sharing the tensors: a caller may change its own splits' labels (label noise).
  data::LoadedData get(const std::optional<data::Normalization>& stored = std::nullopt,
                       const std::filesystem::path& stored_from = {});

  // Whether a stage has read the data already.
  bool read() const { return loaded_.has_value(); }

 private:
  data::DataOptions options_;
  Experiment experiment_;
  std::optional<data::LoadedData> loaded_;
};

}  // namespace plugtrain
