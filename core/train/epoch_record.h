// One epoch's figures as a JSON row: summary.json's "epochs", and the history a checkpoint
// carries so that the summary of a resumed run still lists the epochs trained before it.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "train/loop_state.h"

namespace plugtrain {

nlohmann::json epoch_json(const EpochMetrics& m);

// The host's waits for the device as JSON (null when the backend cannot count them), and those
// of several epochs together.
nlohmann::json host_syncs_json(const HostSyncFigures& s);
HostSyncFigures total_host_syncs(const std::vector<EpochMetrics>& epochs);

// `earlier` (a JSON array, as a checkpoint stores it) followed by `epochs`, as JSON text.
std::string epoch_history(const std::string& earlier, const std::vector<EpochMetrics>& epochs);

// The last epoch's loss and metrics (of `metrics`, by name) on `split`, "test" or "val", in a
// history (nullopt: that epoch did not evaluate it).
std::optional<std::pair<double, std::vector<MetricValue>>> last_figures(const std::string& history,
                                                                        const std::vector<TaskMetric>& metrics,
                                                                        const std::string& split);

}  // namespace plugtrain
