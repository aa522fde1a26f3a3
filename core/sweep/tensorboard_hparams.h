// TensorBoard's hparams plugin data for a set of runs: each run's varied settings as its
// hyperparameters (session start and end), and the experiment (which hyperparameters and
// metrics to compare) in the report folder, so TensorBoard's HPARAMS tab lists and compares
// the runs of a sweep. Field numbers follow tensorboard/plugins/hparams/api.proto and
// plugin_data.proto.
#pragma once

#include <filesystem>

namespace plugtrain {

struct SweepReport;

void write_hparams(const SweepReport& report, const std::filesystem::path& folder);

}  // namespace plugtrain
