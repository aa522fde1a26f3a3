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

}  // namespace

int run_sweep(const SweepRequest& request, std::ostream& out) {
  const SweepSetup setup = prepare_sweep(request);
  if (request.slurm) return submit_sweep_to_slurm(request, setup, out);
  const std::vector<Trial>& trials = setup.trials;
  const fs::path& folder = setup.folder;
  const int jobs = setup.jobs;
  const int threads = setup.threads;

  std::vector<TrialFiles> files = read_trials(setup);
  out << "sweep: " << trials.size() << " trials (" << word_of(setup.spec.method) << ") in " << folder.string() << ", "
      << jobs << " at a time" << (threads ? ", " + std::to_string(threads) + " threads each" : "") << "\n";
  if (setup.schedule.kind != SweepScheduler::none) out << "sweep: " << schedule_line(setup.schedule) << "\n";
  if (request.dry_run) {
    for (std::size_t i = 0; i < trials.size(); ++i)
      out << "  " << (i + 1) << ". " << trials[i].label() << "  [" << to_string(files[i].state) << "]\n";
    out << trials.size() << " trials, "
        << std::count_if(files.begin(), files.end(), [](const TrialFiles& f) { return f.state == TrialState::finished; })
        << " already finished\n";
    return exit_ok;
  }

  // One sweep per folder at a time.
  std::optional<FolderLock> lock(std::in_place, folder, ".sweep.lock", "plugtrain sweep");
  write_sweep_manifest(setup, request);
  // A person starting the sweep retries the trials that failed before; within this sweep a
  // trial that fails is out (of its rung's ranking too), and the others go on.
  for (std::size_t i = 0; i < trials.size(); ++i)
    if (files[i].last_exit && failed_exit(*files[i].last_exit)) forget_trial_exit(folder, trials[i].name);
  // Finished children must be reaped here, even when the sweep was started with SIGCHLD ignored.
  const ReapableChildren reapable;
  fs::create_directories(folder / "logs");
  std::size_t done = std::size_t(
      std::count_if(files.begin(), files.end(), [](const TrialFiles& f) { return f.state == TrialState::finished; }));
  if (done) out << "sweep: " << done << " trials already finished\n";
  std::map<pid_t, Running> running;
  std::vector<int> free_slots;
  for (int s = jobs - 1; s >= 0; --s) free_slots.push_back(s);
  // Failed, or stopped by a signal of its own, in this sweep: not started again by it.
  std::set<std::size_t> not_again;
  std::vector<std::string> failures;
  double seconds_finished = 0;
  std::size_t finished_here = 0, interrupted = 0;
  bool forwarded = false;
  const auto start = Clock::now();
  InterruptScope interrupts;  // Ctrl-C: every running trial checkpoints and stops, none starts
  out << std::flush;

  for (;;) {
    // What to train next, from the trials' files (a rung is decided once its trials are there).
    std::vector<TrialWork> pending;
    if (!interrupt_requested()) {
      files = read_trials(setup);
      for (const TrialWork& w : next_work(setup, files, true))
        if (!not_again.count(w.trial) &&
            std::none_of(running.begin(), running.end(), [&](const auto& r) { return r.second.work.trial == w.trial; }))
          pending.push_back(w);
    }
    std::size_t launched = 0;
    for (; launched < pending.size() && int(running.size()) < jobs; ++launched) {
      const TrialWork& w = pending[launched];
      const int slot = free_slots.back();
      free_slots.pop_back();
      std::vector<std::pair<std::string, std::string>> env;
      if (!setup.device_variable.empty() && std::size_t(slot) < setup.device_ids.size())
        env.emplace_back(setup.device_variable, setup.device_ids[std::size_t(slot)]);
      const fs::path log = trial_log(folder, trials[w.trial].name);
      std::error_code ec;
      const std::uintmax_t offset = fs::exists(log) ? fs::file_size(log, ec) : 0;
      forget_trial_exit(folder, trials[w.trial].name);
      Result<ChildProcess> started = spawn(
          trial_process(trial_command(request, setup, w, threads ? std::to_string(threads) : ""), env, log));
      if (!started) throw Error(started.why_not());
      running[started.value().pid] = {w, slot, Clock::now(), ec ? 0 : offset, files[w.trial].epochs_done};
    }
    if (running.empty()) break;  // nothing left to train (or interrupted and every trial stopped)
    const Reaped f = reap_any();
    if (f.pid == 0 || !running.count(f.pid)) {
      if (interrupt_requested() && !forwarded) {
        for (const auto& [pid, r] : running) send_signal(pid, SIGINT);  // each child once: it checkpoints
        forwarded = true;  // and none starts: the next run of the command continues them
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    const Running r = running[f.pid];
    running.erase(f.pid);
    const int exit_code = f.status.shell_code();
    record_trial_exit(folder, trials[r.work.trial].name, exit_code);
    free_slots.push_back(r.slot);
    const Trial& t = trials[r.work.trial];
    const TrialFiles now = read_trial_files(folder, t.name);
    const double seconds = seconds_since(r.start);
    std::string what;
    if (exit_code == 0 && now.state == TrialState::finished) {
      ++done;
      ++finished_here;
      seconds_finished += seconds;
      what = "finished in " + duration_text(seconds);
    } else if (exit_code == 0 && now.epochs_done > r.epochs_before) {
      what = "reached epoch " + std::to_string(now.epochs_done) + " in " + duration_text(seconds) + ", waits at its rung";
    } else if (exit_code == exit_interrupted) {
      ++interrupted;
      not_again.insert(r.work.trial);
      what = "interrupted (its checkpoint resumes it)";
    } else {
      // A trial that ended well but trained nothing would be asked again and again: a failure.
      const std::string reason = exit_code == 0 ? "exited without training an epoch (see " +
                                                      trial_log(folder, t.name).string() + ")"
                                                : trial_failure_reason(folder, t.name, r.log_offset, exit_code);
      not_again.insert(r.work.trial);
      failures.push_back("trial " + std::to_string(r.work.trial + 1) + " (" + t.label() + "): " + reason);
      what = "FAILED: " + reason;
    }
    const std::size_t left = pending.size() - launched;
    out << "sweep: trial " << (r.work.trial + 1) << "/" << trials.size() << " " << what << " (" << t.label() << ") | "
        << done << " done, " << running.size() << " running";
    if (setup.schedule.kind == SweepScheduler::none) {
      out << ", " << left << " left";
      if (finished_here > 0 && left + running.size() > 0)
        out << ", ETA " << duration_text(double(left + running.size()) * seconds_finished / double(finished_here) / double(jobs));
    }
    out << "\n" << std::flush;
  }
  const double total = seconds_since(start);
  lock.reset();

  try {
    write_report(build_report(folder), folder, out);
  } catch (const std::exception& e) {
    out << "sweep: no report: " << first_line(e.what()) << "\n";
  }
  if (setup.schedule.kind != SweepScheduler::none) write_rung_report(folder, out);
  std::size_t stopped = 0;
  if (setup.schedule.kind != SweepScheduler::none) {
    std::vector<TrialProgress> progress;
    for (const TrialFiles& f : read_trials(setup)) progress.push_back(trial_progress(f, setup.schedule.metric, true));
    for (const TrialDecision& d : decide_rungs(setup.schedule, progress)) stopped += d.verdict == TrialVerdict::stopped;
  }
  out << "sweep: " << done << " of " << trials.size() << " trials finished, "
      << (stopped ? std::to_string(stopped) + " stopped at a rung, " : "") << failures.size() << " failed, "
      << interrupted << " interrupted; " << duration_text(total) << " with " << jobs << " at a time\n";
  if (interrupted || interrupt_requested()) {
    out << "sweep: interrupted; run the same command again to resume\n";
    return exit_interrupted;
  }
  if (!failures.empty()) throw Error(std::to_string(failures.size()) + " trial(s) failed: " + join(failures, "; "));
  return exit_ok;
}

}  // namespace plugtrain
