#include "sweep/sweep_status.h"

#include <map>
#include <ostream>
#include <set>

#include "run/run_folder.h"
#include "sweep/rung_report.h"
#include "sweep/slurm_commands.h"
#include "sweep/slurm_sweep.h"
#include "sweep/sweep_plan.h"
#include "util/error.h"
#include "util/folder_lock.h"
#include "util/text.h"

namespace plugtrain {

namespace fs = std::filesystem;

namespace {

// True while a `plugtrain run` holds the lock of one of the trial's run folders.
bool running_here(const fs::path& sweep_folder, const std::string& trial) {
  std::error_code ec;
  for (const auto& version : fs::directory_iterator(sweep_folder / trial, ec))
    if (run_version(version.path()) >= 0 && folder_in_use(version.path(), ".run.lock")) return true;
  return false;
}

// Slurm's word for the trial's newest array task: PENDING, RUNNING, ... ("" when Slurm has none).
struct SlurmView {
  std::map<std::string, std::string> trial_state;  // trial -> its newest queued task's state
  std::map<std::string, std::string> trial_final;  // trial -> sacct's state of its newest task
  bool asked = false;
  bool reachable = false;
};

SlurmView ask_slurm(const fs::path& sweep_folder) {
  SlurmView v;
  const std::vector<SlurmTask> tasks = submitted_slurm_tasks(sweep_folder);
  if (tasks.empty()) return v;
  v.asked = true;
  const auto queued = queued_array_tasks(slurm_job_name(sweep_folder));
  v.reachable = queued.has_value();
  std::set<std::string> jobs;
  for (const SlurmTask& t : tasks) jobs.insert(t.job_id);
  const auto accounted = accounted_array_tasks({jobs.begin(), jobs.end()});
  for (const SlurmTask& t : tasks) {  // in submission order: the newest task of a trial last
    v.trial_state.erase(t.trial);
    if (queued && queued->count(t.id())) v.trial_state[t.trial] = queued->at(t.id());
    if (accounted.count(t.id())) v.trial_final[t.trial] = accounted.at(t.id());
  }
  return v;
}

}  // namespace

int print_sweep_status(const fs::path& dir, std::ostream& out) {
  fs::path folder = dir;
  if (!fs::exists(folder / "trials.json") && fs::exists(folder / "sweep" / "trials.json")) folder = dir / "sweep";
  const std::optional<SweepManifest> manifest = read_sweep_manifest(folder);
  if (!manifest)
    throw Error(dir.string() + ": no sweep here (no trials.json; give runs/<name>/sweep of a sweep started by plugtrain "
                               "sweep)");
  const RungSchedule& schedule = manifest->schedule;
  const SlurmView slurm = ask_slurm(folder);
  std::vector<TrialFiles> files;
  std::vector<TrialProgress> progress;
  for (const std::string& name : manifest->names) {
    files.push_back(read_trial_files(folder, name));
    progress.push_back(trial_progress(files.back(), schedule.metric, true));
  }
  const std::vector<TrialDecision> decisions = decide_rungs(schedule, progress);

  std::map<std::string, int> counts;
  out << "sweep: " << folder.string() << ", " << manifest->names.size() << " trials from "
      << manifest->experiment.string() << "\n";
  if (schedule.kind != SweepScheduler::none) out << "sweep: " << schedule_line(schedule) << "\n";
  if (slurm.asked && !slurm.reachable) out << "sweep: squeue did not answer: the states below come from the files alone\n";
  for (std::size_t i = 0; i < manifest->names.size(); ++i) {
    const std::string& name = manifest->names[i];
    const TrialFiles& f = files[i];
    const auto queued = slurm.trial_state.find(name);
    std::string state, detail;
    if (queued != slurm.trial_state.end() && queued->second != "RUNNING" && queued->second != "COMPLETING") {
      state = "pending";
      detail = "Slurm: " + queued->second;
    } else if (queued != slurm.trial_state.end() || running_here(folder, name)) {
      state = "running";
      detail = "epoch " + std::to_string(f.epochs_done) + " done";
    } else if (f.state == TrialState::finished) {
      state = "finished";
      if (schedule.kind != SweepScheduler::none) detail = verdict_text(schedule, decisions[i], f);
    } else if (f.last_exit && failed_exit(*f.last_exit)) {
      state = "failed";
      detail = trial_failure_reason(folder, name, 0, *f.last_exit);
    } else if (schedule.kind != SweepScheduler::none && decisions[i].verdict != TrialVerdict::run) {
      state = decisions[i].verdict == TrialVerdict::stopped ? "stopped" : "waiting";
      detail = verdict_text(schedule, decisions[i], f);
    } else if (schedule.kind != SweepScheduler::none && decisions[i].rung > 0 &&
               f.epochs_done >= schedule.milestones(decisions[i].bracket)[std::size_t(decisions[i].rung - 1)]) {
      state = "promoted";  // decided, not started yet: the sweep (or its follow-up job) starts it next
      detail = verdict_text(schedule, decisions[i], f);
    } else if (f.state == TrialState::resume || f.epochs_done > 0) {
      state = "interrupted";
      detail = "after epoch " + std::to_string(f.epochs_done) + (f.stop_reason.empty() ? "" : " (" + f.stop_reason + ")") +
               "; its checkpoint resumes it";
    } else {
      state = "pending";
      detail = "not started";
    }
    // Where the cluster keeps accounting, what ended a task the files could not say (TIMEOUT, OUT_OF_MEMORY).
    if (const auto final = slurm.trial_final.find(name);
        final != slurm.trial_final.end() && (state == "interrupted" || state == "failed") && final->second != "COMPLETED")
      detail += " [Slurm: " + final->second + "]";
    ++counts[state];
    out << "  " << (i + 1) << ". " << state << "  " << manifest->labels[i] << (detail.empty() ? "" : "  — " + detail) << "\n";
  }
  std::vector<std::string> summary;
  for (const auto& [state, n] : counts) summary.push_back(std::to_string(n) + " " + state);
  out << "sweep: " << join(summary, ", ") << "\n";
  return counts.count("failed") ? exit_failure : exit_ok;
}

}  // namespace plugtrain
