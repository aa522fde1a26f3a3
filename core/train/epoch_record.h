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

// `earlier` (a JSON array, as a checkpoint stores it) followed by `epochs`, as JSON text.
std::string epoch_history(const std::string& earlier, const std::vector<EpochMetrics>& epochs);

// The last epoch's test loss and test metrics (of `metrics`, by name) in a history (nullopt:
// none was evaluated).
std::optional<std::pair<double, std::vector<MetricValue>>> last_test_figures(const std::string& history,
                                                                              const std::vector<MetricSpec>& metrics);

}  // namespace plugtrain
