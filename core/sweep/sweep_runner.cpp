#include "sweep/sweep_runner.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <ostream>
#include <thread>
#include <utility>
#include <vector>

#include "process/interrupt.h"
#include "sweep/rung_report.h"
#include "sweep/slurm_sweep.h"
#include "sweep/sweep_loggers.h"
#include "sweep/sweep_plan.h"
#include "sweep/sweep_report.h"
#include "sweep/sweep_spec.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/folder_lock.h"
#include "util/subprocess.h"
#include "util/text.h"

namespace plugtrain {

namespace fs = std::filesystem;

namespace {


const char* to_string(TrialState s) {
  return s == TrialState::finished ? "finished" : s == TrialState::resume ? "resume from last.ckpt" : "new";
}

// A trial's `plugtrain run`: in a process group of its own, so a Ctrl-C on the terminal reaches
// only the sweep, which passes it on once; it dies with the sweep; its stdout and stderr are
// appended to `log`.
SpawnSpec trial_process(std::vector<std::string> argv, std::vector<std::pair<std::string, std::string>> environment,
                        const fs::path& log) {
  SpawnSpec spec;
  spec.argv = std::move(argv);
  spec.environment = std::move(environment);
  spec.output_file = log;
  spec.errors_to_output = true;
  spec.own_process_group = true;
  spec.death_signal = SIGTERM;
  return spec;
}

std::string duration_text(double seconds) {
  const long s = std::lround(seconds);
  char buf[32];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%ldh %02ldm", s / 3600, s / 60 % 60);
  else if (s >= 60) std::snprintf(buf, sizeof buf, "%ldm %02lds", s / 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%lds", s);
  return buf;
}

struct Running {
  TrialWork work;
  int slot;
  Clock::time_point start;
  std::uintmax_t log_offset;  // where this attempt's output starts in the trial's log
  std::int64_t epochs_before;  // the trial's epochs when it started
};

std::size_t count_finished(const std::vector<TrialFiles>& files) {
  return std::size_t(
      std::count_if(files.begin(), files.end(), [](const TrialFiles& f) { return f.state == TrialState::finished; }));
}

// A sweep's trials trained here, `jobs` at a time, each a child `plugtrain run`; the next work
// is read from the trials' files after every trial that ends (a rung is decided once its trials
// are there).
class LocalSweep {
 public:
  LocalSweep(const SweepRequest& request, const SweepSetup& setup, std::ostream& out)
      : request_(request), setup_(setup), trials_(setup.trials), folder_(setup.folder), out_(out) {
    for (int s = setup.jobs - 1; s >= 0; --s) free_slots_.push_back(s);
  }

  int run(std::vector<TrialFiles> files);

 private:
  std::vector<TrialWork> next_pending();
  void launch(const TrialWork& w);
  // What the trial a finished child ran has done, for the sweep's line about it.
  std::string judge(const Running& r, int exit_code);
  void report_ended(const Running& r, const std::string& what, std::size_t left);
  int finish(double seconds);

  const SweepRequest& request_;
  const SweepSetup& setup_;
  const std::vector<Trial>& trials_;
  const fs::path& folder_;
  std::ostream& out_;
  std::vector<TrialFiles> files_;
  std::map<pid_t, Running> running_;
  std::vector<int> free_slots_;
  std::set<std::size_t> not_again_;  // failed, or stopped by a signal of its own, in this sweep
  std::vector<std::string> failures_;
  std::unique_ptr<SweepLoggers> loggers_;  // the sweep's own run (an MLflow parent)
  double seconds_finished_ = 0;
  std::size_t done_ = 0, finished_here_ = 0, interrupted_ = 0;
};

int LocalSweep::run(std::vector<TrialFiles> files) {
  files_ = std::move(files);
  // One sweep per folder at a time.
  std::optional<FolderLock> lock(std::in_place, folder_, ".sweep.lock", "plugtrain sweep");
  write_sweep_manifest(setup_, request_);
  loggers_ = std::make_unique<SweepLoggers>(setup_, out_);
  // A person starting the sweep retries the trials that failed before; within this sweep a
  // trial that fails is out (of its rung's ranking too), and the others go on.
  for (std::size_t i = 0; i < trials_.size(); ++i)
    if (files_[i].last_exit && failed_exit(*files_[i].last_exit)) forget_trial_exit(folder_, trials_[i].name);
  // Finished children must be reaped here, even when the sweep was started with SIGCHLD ignored.
  const ReapableChildren reapable;
  fs::create_directories(folder_ / "logs");
  done_ = count_finished(files_);
  if (done_) out_ << "sweep: " << done_ << " trials already finished\n";
  bool forwarded = false;
  const auto start = Clock::now();
  InterruptScope interrupts;  // Ctrl-C: every running trial checkpoints and stops, none starts
  out_ << std::flush;
  for (;;) {
    const std::vector<TrialWork> pending = next_pending();
    std::size_t launched = 0;
    for (; launched < pending.size() && int(running_.size()) < setup_.jobs; ++launched) launch(pending[launched]);
    if (running_.empty()) break;  // nothing left to train (or interrupted and every trial stopped)
    const Reaped f = reap_any();
    if (f.pid == 0 || !running_.count(f.pid)) {
      if (interrupt_requested() && !forwarded) {
        for (const auto& [pid, r] : running_) send_signal(pid, SIGINT);  // each child once: it checkpoints
        forwarded = true;  // and none starts: the next run of the command continues them
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    const Running r = running_[f.pid];
    running_.erase(f.pid);
    free_slots_.push_back(r.slot);
    const int exit_code = f.status.shell_code();
    record_trial_exit(folder_, trials_[r.work.trial].name, exit_code);
    report_ended(r, judge(r, exit_code), pending.size() - launched);
  }
  const double seconds = seconds_since(start);
  lock.reset();
  return finish(seconds);
}

std::vector<TrialWork> LocalSweep::next_pending() {
  std::vector<TrialWork> pending;
  if (interrupt_requested()) return pending;
  files_ = read_trials(setup_);
  for (const TrialWork& w : next_work(setup_, files_, true))
    if (!not_again_.count(w.trial) &&
        std::none_of(running_.begin(), running_.end(), [&](const auto& r) { return r.second.work.trial == w.trial; }))
      pending.push_back(w);
  return pending;
}

void LocalSweep::launch(const TrialWork& w) {
  const int slot = free_slots_.back();
  free_slots_.pop_back();
  std::vector<std::pair<std::string, std::string>> env = loggers_->trial_environment();
  if (!setup_.device_variable.empty() && std::size_t(slot) < setup_.device_ids.size())
    env.emplace_back(setup_.device_variable, setup_.device_ids[std::size_t(slot)]);
  const fs::path log = trial_log(folder_, trials_[w.trial].name);
  std::error_code ec;
  const std::uintmax_t offset = fs::exists(log) ? fs::file_size(log, ec) : 0;
  forget_trial_exit(folder_, trials_[w.trial].name);
  const std::string threads = setup_.threads ? std::to_string(setup_.threads) : "";
  Result<ChildProcess> started = spawn(trial_process(trial_command(request_, setup_, w, threads), env, log));
  if (!started) throw Error(started.why_not());
  running_[started.value().pid] = {w, slot, Clock::now(), ec ? 0 : offset, files_[w.trial].epochs_done};
}

std::string LocalSweep::judge(const Running& r, int exit_code) {
  const Trial& t = trials_[r.work.trial];
  const TrialFiles now = read_trial_files(folder_, t.name);
  const double seconds = seconds_since(r.start);
  if (exit_code == 0 && now.state == TrialState::finished) {
    ++done_;
    ++finished_here_;
    seconds_finished_ += seconds;
    return "finished in " + duration_text(seconds);
  }
  if (exit_code == 0 && now.epochs_done > r.epochs_before)
    return "reached epoch " + std::to_string(now.epochs_done) + " in " + duration_text(seconds) + ", waits at its rung";
  not_again_.insert(r.work.trial);
  if (exit_code == exit_interrupted) {
    ++interrupted_;
    return "interrupted (its checkpoint resumes it)";
  }
  // A trial that ended well but trained nothing would be asked again and again: a failure.
  const std::string reason = exit_code == 0
                                 ? "exited without training an epoch (see " + trial_log(folder_, t.name).string() + ")"
                                 : trial_failure_reason(folder_, t.name, r.log_offset, exit_code);
  failures_.push_back("trial " + std::to_string(r.work.trial + 1) + " (" + t.label() + "): " + reason);
  return "FAILED: " + reason;
}

void LocalSweep::report_ended(const Running& r, const std::string& what, std::size_t left) {
  out_ << "sweep: trial " << (r.work.trial + 1) << "/" << trials_.size() << " " << what << " ("
       << trials_[r.work.trial].label() << ") | " << done_ << " done, " << running_.size() << " running";
  if (setup_.schedule.kind == SweepScheduler::none) {
    out_ << ", " << left << " left";
    if (finished_here_ > 0 && left + running_.size() > 0)
      out_ << ", ETA "
           << duration_text(double(left + running_.size()) * seconds_finished_ / double(finished_here_) /
                            double(setup_.jobs));
  }
  out_ << "\n" << std::flush;
}

int LocalSweep::finish(double seconds) {
  try {
    write_report(build_report(folder_), folder_, out_);
  } catch (const std::exception& e) { out_ << "sweep: no report: " << first_line(e.what()) << "\n"; }
  std::size_t stopped = 0;
  if (setup_.schedule.kind != SweepScheduler::none) {
    write_rung_report(folder_, out_);
    std::vector<TrialProgress> progress;
    for (const TrialFiles& f : read_trials(setup_)) progress.push_back(trial_progress(f, setup_.schedule.metric, true));
    for (const TrialDecision& d : decide_rungs(setup_.schedule, progress))
      stopped += d.verdict == TrialVerdict::stopped;
  }
  out_ << "sweep: " << done_ << " of " << trials_.size() << " trials finished, "
       << (stopped ? std::to_string(stopped) + " stopped at a rung, " : "") << failures_.size() << " failed, "
       << interrupted_ << " interrupted; " << duration_text(seconds) << " with " << setup_.jobs << " at a time\n";
  loggers_->finish(interrupted_ || interrupt_requested() ? RunEnd::killed
                   : failures_.empty()                   ? RunEnd::finished
                                                         : RunEnd::failed);
  if (interrupted_ || interrupt_requested()) {
    out_ << "sweep: interrupted; run the same command again to resume\n";
    return exit_interrupted;
  }
  if (!failures_.empty()) throw Error(std::to_string(failures_.size()) + " trial(s) failed: " + join(failures_, "; "));
  return exit_ok;
}

}  // namespace

int run_sweep(const SweepRequest& request, std::ostream& out) {
  const SweepSetup setup = prepare_sweep(request);
  if (request.slurm) return submit_sweep_to_slurm(request, setup, out);
  std::vector<TrialFiles> files = read_trials(setup);
  out << "sweep: " << setup.trials.size() << " trials (" << word_of(setup.spec.method) << ") in "
      << setup.folder.string() << ", " << setup.jobs << " at a time"
      << (setup.threads ? ", " + std::to_string(setup.threads) + " threads each" : "") << "\n";
  if (setup.schedule.kind != SweepScheduler::none) out << "sweep: " << schedule_line(setup.schedule) << "\n";
  if (request.dry_run) {
    for (std::size_t i = 0; i < setup.trials.size(); ++i)
      out << "  " << (i + 1) << ". " << setup.trials[i].label() << "  [" << to_string(files[i].state) << "]\n";
    out << setup.trials.size() << " trials, " << count_finished(files) << " already finished\n";
    return exit_ok;
  }
  return LocalSweep(request, setup, out).run(std::move(files));
}

}  // namespace plugtrain
