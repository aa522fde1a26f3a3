// What a sweep trial's own files say about it: its run folders (summary.json, metrics.csv,
// checkpoints) and the sweep's record of its last attempt (logs/<trial>.exit, logs/<trial>.log).
// The local runner, the Slurm submission, `sweep --status` and the rung scheduler all read a
// trial through this, so a sweep stopped at any moment picks up where its files say it is.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "config/choices.h"
#include "sweep/rung_scheduler.h"

namespace plugtrain {

enum class TrialState { fresh, resume, finished };

struct TrialFiles {
  TrialState state = TrialState::fresh;
  bool paused = false;              // its last run stopped where --stop-after-epoch asked
  std::int64_t epochs_done = 0;     // epoch rows of metrics.csv (over every resume)
  // Each monitor name's values (train_loss, test_accuracy, ...): epoch -> value.
  std::map<std::string, std::map<std::int64_t, double>> metrics;
  std::optional<int> last_exit;     // the exit code its last attempt recorded (logs/<trial>.exit)
  std::string stop_reason;          // summary.json's, when it stopped before its end
};

TrialFiles read_trial_files(const std::filesystem::path& sweep_folder, const std::string& trial);

// The metric's values per epoch.
const std::map<std::int64_t, double>& metric_values(const TrialFiles& files, const std::string& metric);

// The trial's progress as the rung scheduler needs it. keep_failures: a failed last attempt
// takes it out of the ranking (a sweep continuing by itself); false retries it.
TrialProgress trial_progress(const TrialFiles& files, const std::string& metric, bool keep_failures);

// Records an attempt's exit code (written atomically; read back as last_exit).
void record_trial_exit(const std::filesystem::path& sweep_folder, const std::string& trial, int exit_code);
// Forgets the recorded exit (the next attempt starts clean).
void forget_trial_exit(const std::filesystem::path& sweep_folder, const std::string& trial);

// True when the exit code is a failure rather than an end, a pause or an interruption.
bool failed_exit(int exit_code);

// The last "plugtrain: error: ..." line a trial printed in its log after byte `offset`, or
// "exited with code N (see LOG)".
std::string trial_failure_reason(const std::filesystem::path& sweep_folder, const std::string& trial,
                                 std::uintmax_t offset, int exit_code);

std::filesystem::path trial_log(const std::filesystem::path& sweep_folder, const std::string& trial);

}  // namespace plugtrain
