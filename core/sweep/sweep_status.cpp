#include "sweep/sweep_status.h"

#include <fstream>
#include <map>
#include <ostream>
#include <set>

#include <nlohmann/json.hpp>

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

// One trial's state, from its files, the lock of a run in progress, the rung decisions and Slurm.
TrialStatus trial_status(const fs::path& folder, const std::string& name, const TrialFiles& f,
                         const RungSchedule& schedule, const TrialDecision& decision, const SlurmView& slurm) {
  TrialStatus t;
  t.name = name;
  std::string& state = t.state;
  std::string& detail = t.detail;
  const auto queued = slurm.trial_state.find(name);
  const bool rungs = schedule.kind != SweepScheduler::none;
  if (queued != slurm.trial_state.end() && queued->second != "RUNNING" && queued->second != "COMPLETING") {
    state = "pending";
    detail = "Slurm: " + queued->second;
  } else if (queued != slurm.trial_state.end() || running_here(folder, name)) {
    state = "running";
    detail = "epoch " + std::to_string(f.epochs_done) + " done";
  } else if (f.state == TrialState::finished) {
    state = "finished";
    if (rungs) detail = verdict_text(schedule, decision, f);
  } else if (f.last_exit && failed_exit(*f.last_exit)) {
    state = "failed";
    detail = trial_failure_reason(folder, name, 0, *f.last_exit);
  } else if (rungs && decision.verdict != TrialVerdict::run) {
    state = decision.verdict == TrialVerdict::stopped ? "stopped" : "waiting";
    detail = verdict_text(schedule, decision, f);
  } else if (rungs && decision.rung > 0 &&
             f.epochs_done >= schedule.milestones(decision.bracket)[std::size_t(decision.rung - 1)]) {
    state = "promoted";  // decided, not started yet: the sweep (or its follow-up job) starts it next
    detail = verdict_text(schedule, decision, f);
  } else if (f.state == TrialState::resume || f.epochs_done > 0) {
    state = "interrupted";
    detail = "after epoch " + std::to_string(f.epochs_done) +
             (f.stop_reason.empty() ? "" : " (" + f.stop_reason + ")") + "; its checkpoint resumes it";
  } else {
    state = "pending";
    detail = "not started";
  }
  // The array script records its allocation's nodes (SLURM_JOB_NODELIST) before the trial starts.
  std::ifstream(folder / "logs" / (name + ".nodes")) >> t.nodes;
  // Where the cluster keeps accounting, what ended a task the files could not say (TIMEOUT, OUT_OF_MEMORY).
  if (const auto final = slurm.trial_final.find(name);
      final != slurm.trial_final.end() && (state == "interrupted" || state == "failed") && final->second != "COMPLETED")
    detail += " [Slurm: " + final->second + "]";
  return t;
}

}  // namespace

SweepStatus read_sweep_status(const fs::path& dir) {
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

  SweepStatus status;
  status.folder = folder;
  status.experiment = manifest->experiment;
  if (schedule.kind != SweepScheduler::none) status.schedule = schedule_line(schedule);
  status.slurm_unanswered = slurm.asked && !slurm.reachable;
  for (std::size_t i = 0; i < manifest->names.size(); ++i) {
    status.trials.push_back(trial_status(folder, manifest->names[i], files[i], schedule, decisions[i], slurm));
    status.trials.back().label = manifest->labels[i];
    ++status.counts[status.trials.back().state];
  }
  return status;
}

void print_sweep_status(const SweepStatus& status, std::ostream& out) {
  out << "sweep: " << status.folder.string() << ", " << status.trials.size() << " trials from "
      << status.experiment.string() << "\n";
  if (!status.schedule.empty()) out << "sweep: " << status.schedule << "\n";
  if (status.slurm_unanswered) out << "sweep: squeue did not answer: the states below come from the files alone\n";
  for (std::size_t i = 0; i < status.trials.size(); ++i) {
    const TrialStatus& t = status.trials[i];
    out << "  " << (i + 1) << ". " << t.state << "  " << t.label << (t.detail.empty() ? "" : "  — " + t.detail) << "\n";
  }
  std::vector<std::string> summary;
  for (const auto& [state, n] : status.counts) summary.push_back(std::to_string(n) + " " + state);
  out << "sweep: " << join(summary, ", ") << "\n";
}

nlohmann::json sweep_status_json(const SweepStatus& status) {
  nlohmann::json trials = nlohmann::json::array();
  for (const TrialStatus& t : status.trials)
    trials.push_back({{"trial", t.name},
                      {"overrides", t.label},
                      {"state", t.state},
                      {"detail", t.detail},
                      {"nodes", t.nodes.empty() ? nlohmann::json(nullptr) : nlohmann::json(t.nodes)}});
  return {{"sweep", status.folder.string()},
          {"experiment", status.experiment.string()},
          {"scheduler", status.schedule.empty() ? nlohmann::json(nullptr) : nlohmann::json(status.schedule)},
          {"squeue_unanswered", status.slurm_unanswered},
          {"trials", trials},
          {"counts", status.counts}};
}

}  // namespace plugtrain
