#include "sweep/trial_files.h"

#include <cmath>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "run/run_folder.h"
#include "sweep/run_records.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace plugtrain {

namespace fs = std::filesystem;

namespace {

double cell_number(const std::string& cell) {
  try {
    return std::stod(cell);
  } catch (const std::logic_error&) {  // "nan" parses; anything else unreadable counts as NaN
    return std::numeric_limits<double>::quiet_NaN();
  }
}

fs::path exit_file(const fs::path& sweep_folder, const std::string& trial) {
  return sweep_folder / "logs" / (trial + ".exit");
}

}  // namespace

fs::path trial_log(const fs::path& sweep_folder, const std::string& trial) {
  return sweep_folder / "logs" / (trial + ".log");
}

TrialFiles read_trial_files(const fs::path& sweep_folder, const std::string& trial) {
  TrialFiles t;
  if (std::ifstream in(exit_file(sweep_folder, trial)); in) {
    int code = 0;
    if (in >> code) t.last_exit = code;
  }
  const fs::path folder = sweep_folder / trial;
  if (!fs::is_directory(folder)) return t;
  // The newest run folder is the trial's current run (an earlier one crashed before its first checkpoint).
  fs::path newest;
  bool checkpoint = false;
  for (const auto& version : fs::directory_iterator(folder)) {
    if (run_version(version.path()) < 0) continue;
    if (newest.empty() || run_version(version.path()) > run_version(newest)) newest = version.path();
    checkpoint |= fs::exists(version.path() / "checkpoints" / "last.ckpt");
  }
  t.state = checkpoint ? TrialState::resume : TrialState::fresh;
  if (newest.empty()) return t;
  if (const fs::path summary = newest / "summary.json"; fs::exists(summary)) {
    try {
      const nlohmann::json s = nlohmann::json::parse(std::ifstream(summary));
      if (!s.value("interrupted", true)) t.state = TrialState::finished;
      t.paused = s.value("paused", false);
      t.stop_reason = s.value("stop_reason", "");
    } catch (const nlohmann::json::exception&) {
      // A summary cut short by a killed trial: no finished run; its checkpoint (if any) resumes it.
    }
  }
  const std::vector<std::string> names = metrics_columns(newest / "metrics.csv");
  for (const auto& [epoch, cells] : metrics_epoch_rows(newest / "metrics.csv")) {
    t.epochs_done = std::max(t.epochs_done, epoch);
    // Columns 3 on are metrics but lr, samples_per_second and seconds; a metric's empty cell:
    // the epoch did not measure it.
    for (std::size_t c = 3; c < std::min(cells.size(), names.size()); ++c)
      if (c < 7 || c > 9)
        if (!cells[c].empty()) t.metrics[names[c]][epoch] = cell_number(cells[c]);
  }
  return t;
}

const std::map<std::int64_t, double>& metric_values(const TrialFiles& files, const std::string& metric) {
  static const std::map<std::int64_t, double> none;
  const auto found = files.metrics.find(metric);
  return found == files.metrics.end() ? none : found->second;
}

TrialProgress trial_progress(const TrialFiles& files, const std::string& metric, bool keep_failures) {
  TrialProgress p;
  p.epochs_done = files.epochs_done;
  p.metric = metric_values(files, metric);
  p.ended = files.state == TrialState::finished;
  p.failed = keep_failures && files.last_exit && failed_exit(*files.last_exit) && !p.ended;
  return p;
}

void record_trial_exit(const fs::path& sweep_folder, const std::string& trial, int exit_code) {
  write_file_atomically(exit_file(sweep_folder, trial), std::to_string(exit_code) + "\n");
}

void forget_trial_exit(const fs::path& sweep_folder, const std::string& trial) {
  std::error_code ec;
  fs::remove(exit_file(sweep_folder, trial), ec);
}

bool failed_exit(int exit_code) { return exit_code != exit_ok && exit_code != exit_interrupted; }

std::string trial_failure_reason(const fs::path& sweep_folder, const std::string& trial, std::uintmax_t offset,
                                 int exit_code) {
  const fs::path log = trial_log(sweep_folder, trial);
  std::ifstream in(log);
  in.seekg(std::streamoff(offset));
  std::string reason;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("plugtrain: error: ", 0) == 0) reason = line.substr(18);
  return reason.empty() ? "exited with code " + std::to_string(exit_code) + " (see " + log.string() + ")" : reason;
}

}  // namespace plugtrain
