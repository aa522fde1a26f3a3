// `plugtrain send-logs RUN`: what a run's loggers could not send while it ran (an MLflow server
// that was down), sent now. The loggers are those the run's experiment.toml names, each made
// again from its options and started with LoggedRun::resending() true.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <vector>

namespace plugtrain {

// Throws Error naming the folder when it is not a run folder (no experiment.toml), ConfigError
// when its [logging] names a logger no plugin here has.
void send_kept_logs(const std::filesystem::path& run_folder, const std::vector<std::filesystem::path>& plugin_paths,
                    std::ostream& log);

}  // namespace plugtrain
