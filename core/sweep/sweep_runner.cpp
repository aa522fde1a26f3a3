#include "sweep/sweep_runner.h"

#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <deque>
#include <map>
#include <optional>
#include <fstream>
#include <ostream>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config_error.h"
#include "config/experiment_loader.h"
#include "config/toml_text.h"
#include "run/plan.h"
#include "run/validate.h"
#include "sweep/sweep_report.h"
#include "sweep/sweep_spec.h"
#include "util/error.h"
#include "util/folder_lock.h"
#include "util/interrupt.h"
#include "util/subprocess.h"
#include "util/text.h"

namespace plugtrain {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

enum class TrialState { fresh, resume, finished };

const char* to_string(TrialState s) {
  return s == TrialState::finished ? "finished" : s == TrialState::resume ? "resume from last.ckpt" : "new";
}

// What the trial's folder holds: a finished run (a summary that was not interrupted), a
// checkpoint to resume from, or nothing yet.
TrialState state_of(const fs::path& trial_folder) {
  if (!fs::is_directory(trial_folder)) return TrialState::fresh;
  bool checkpoint = false;
  for (const auto& version : fs::directory_iterator(trial_folder)) {
    const fs::path summary = version.path() / "summary.json";
    if (fs::exists(summary)) {
      try {
        if (!nlohmann::json::parse(std::ifstream(summary)).value("interrupted", true)) return TrialState::finished;
      } catch (const nlohmann::json::exception&) {
        // A summary that cannot be read (cut short by a killed trial) is no finished run: the trial runs again.
      }
    }
    checkpoint |= fs::exists(version.path() / "checkpoints" / "last.ckpt");
  }
  return checkpoint ? TrialState::resume : TrialState::fresh;
}

// The `plugtrain run` request of one trial (for validation, and as the child's arguments).
RunRequest trial_request(const SweepRequest& sweep, const Trial& trial, const fs::path& folder, int threads) {
  RunRequest r;
  r.experiment_file = sweep.experiment_file;
  // The cores' share first: a thread count the experiment, --set or the trial names wins.
  if (threads > 0) r.overrides.push_back("train.threads=" + std::to_string(threads));
  for (const auto& o : sweep.overrides) r.overrides.push_back(o);
  for (const auto& a : trial.set_arguments()) r.overrides.push_back(a);
  r.overrides.push_back("experiment.name=" + toml_quoted(trial.name));
  r.overrides.push_back("experiment.output=" + toml_quoted(folder.string()));
  r.plugin_paths = sweep.plugin_paths;
  r.host_cpu_only = sweep.host_cpu_only;
  r.sweep_trial = true;
  return r;
}

std::vector<std::string> child_argv(const SweepRequest& sweep, const RunRequest& r, bool resume) {
  std::vector<std::string> argv{sweep.executable.string(), "run", r.experiment_file.string(), "--sweep-trial"};
  for (const auto& o : r.overrides) argv.insert(argv.end(), {"--set", o});
  for (const auto& p : r.plugin_paths) argv.insert(argv.end(), {"--plugin-path", p.string()});
  if (r.host_cpu_only) argv.push_back("--no-gpu");
  if (resume) argv.insert(argv.end(), {"--resume", "last"});
  return argv;
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

// The last "plugtrain: error: ..." line a failed trial printed (after `offset`: its log is
// appended to by every attempt).
std::string failure_reason(const fs::path& log, std::uintmax_t offset, int exit_code) {
  std::ifstream in(log);
  in.seekg(std::streamoff(offset));
  std::string reason;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("plugtrain: error: ", 0) == 0) reason = line.substr(18);
  return reason.empty() ? "exited with code " + std::to_string(exit_code) + " (see " + log.string() + ")" : reason;
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
  std::size_t trial;
  int slot;
  Clock::time_point start;
  std::uintmax_t log_offset;  // where this attempt's output starts in the trial's log
};

// The devices a process may use, as the backend's variable lists them for this process
// ("2,3" when the sweep itself was given those), so trial k gets the k-th of them.
std::vector<std::string> visible_devices(const std::string& variable, std::size_t count) {
  std::vector<std::string> ids;
  if (const char* set = std::getenv(variable.c_str()); set && *set) {
    std::stringstream s(set);
    for (std::string id; std::getline(s, id, ',');)
      if (!id.empty()) ids.push_back(id);
  } else {
    for (std::size_t i = 0; i < count; ++i) ids.push_back(std::to_string(i));
  }
  return ids;
}

}  // namespace

int run_sweep(const SweepRequest& request, std::ostream& out) {
  ExperimentFile file = parse_experiment_file(request.experiment_file);
  for (const auto& o : request.overrides) apply_override(file, o);
  const SweepSpec spec = read_sweep(file);
  const std::vector<Trial> trials = spec.expand();
  const Experiment base = resolve_experiment(file);
  const fs::path folder = fs::path(base.experiment.output) / base.experiment.name / "sweep";

  // Every trial is checked before the first starts; the first one's plan says how many run
  // at a time and on which devices.
  int jobs = request.jobs;
  std::string device_variable;         // set: each trial gets its own device through it
  std::vector<std::string> device_ids;  // what the variable is set to, per job slot
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  for (std::size_t i = 0; i < trials.size(); ++i) {
    try {
      ValidatedRun run = validate(trial_request(request, trials[i], folder, 0));
      if (i == 0) {
        const RunPlan plan = plan_run(run, {request.host_cpu_only, {}}, std::nullopt);
        const std::size_t devices = plan.choice.backend->probe().devices.size();
        if (jobs == 0) jobs = plan.capabilities.host_cpu ? 1 : int(std::max<std::size_t>(1, devices));
        if (!plan.capabilities.host_cpu && jobs > 1) {
          device_variable = plan.capabilities.visible_devices_variable;
          if (!device_variable.empty()) device_ids = visible_devices(device_variable, devices);
          if (std::size_t(jobs) > std::max<std::size_t>(devices, 1))
            throw ConfigError("--jobs " + std::to_string(jobs) + " trials at a time on " + plan.choice.backend->name() +
                              ", which has " + std::to_string(devices) + " device(s): one trial per device at most");
        }
      }
    } catch (const Error& e) {
      throw ConfigError("sweep trial " + std::to_string(i + 1) + " of " + std::to_string(trials.size()) + " (" +
                        trials[i].label() + "): " + e.what());
    }
  }
  // On the CPU the trials share the cores: each gets its part as intra-op threads.
  const int threads = device_variable.empty() && jobs > 1 && base.train.threads == 0 ? std::max(1, int(cores) / jobs) : 0;

  std::vector<TrialState> states;
  for (const Trial& t : trials) states.push_back(state_of(folder / t.name));
  out << "sweep: " << trials.size() << " trials (" << word_of(spec.method) << ") in " << folder.string() << ", " << jobs
      << " at a time" << (threads ? ", " + std::to_string(threads) + " threads each" : "")
      << "\n";
  if (request.dry_run) {
    for (std::size_t i = 0; i < trials.size(); ++i)
      out << "  " << (i + 1) << ". " << trials[i].label() << "  [" << to_string(states[i]) << "]\n";
    out << trials.size() << " trials, " << std::count(states.begin(), states.end(), TrialState::finished)
        << " already finished\n";
    return exit_ok;
  }

  // One sweep per folder at a time.
  std::optional<FolderLock> lock(std::in_place, folder, ".sweep.lock", "plugtrain sweep");
  // Finished children must be reaped here, even when the sweep was started with SIGCHLD ignored.
  const ReapableChildren reapable;
  fs::create_directories(folder / "logs");
  std::deque<std::size_t> pending;
  for (std::size_t i = 0; i < trials.size(); ++i)
    if (states[i] != TrialState::finished) pending.push_back(i);
  std::size_t done = trials.size() - pending.size();
  if (done) out << "sweep: " << done << " trials already finished\n";
  std::map<pid_t, Running> running;
  std::vector<int> free_slots;
  for (int s = jobs - 1; s >= 0; --s) free_slots.push_back(s);
  std::vector<std::string> failures;
  double seconds_finished = 0;
  std::size_t finished_here = 0, interrupted = 0;
  bool forwarded = false;
  const auto start = Clock::now();
  InterruptScope interrupts;  // Ctrl-C: every running trial checkpoints and stops, none starts
  out << std::flush;

  while (!pending.empty() || !running.empty()) {
    while (!interrupt_requested() && !pending.empty() && int(running.size()) < jobs) {
      const std::size_t i = pending.front();
      pending.pop_front();
      const int slot = free_slots.back();
      free_slots.pop_back();
      std::vector<std::pair<std::string, std::string>> env;
      if (!device_variable.empty() && std::size_t(slot) < device_ids.size())
        env.emplace_back(device_variable, device_ids[std::size_t(slot)]);
      const RunRequest r = trial_request(request, trials[i], folder, threads);
      const fs::path log = folder / "logs" / (trials[i].name + ".log");
      std::error_code ec;
      const std::uintmax_t offset = fs::exists(log) ? fs::file_size(log, ec) : 0;
      Result<ChildProcess> started =
          spawn(trial_process(child_argv(request, r, state_of(folder / trials[i].name) == TrialState::resume), env, log));
      if (!started) throw Error(started.why_not());
      running[started.value().pid] = {i, slot, Clock::now(), ec ? 0 : offset};
    }
    const Reaped f = reap_any();
    if (f.pid == 0 || !running.count(f.pid)) {
      if (interrupt_requested() && !forwarded) {
        for (const auto& [pid, r] : running) send_signal(pid, SIGINT);  // each child once: it checkpoints
        forwarded = true;
        pending.clear();  // and none starts: the next run of the command continues them
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    const Running r = running[f.pid];
    running.erase(f.pid);
    const int exit_code = f.status.shell_code();
    free_slots.push_back(r.slot);
    const Trial& t = trials[r.trial];
    const double seconds = std::chrono::duration<double>(Clock::now() - r.start).count();
    std::string what;
    if (exit_code == 0) {
      ++done;
      ++finished_here;
      seconds_finished += seconds;
      what = "finished in " + duration_text(seconds);
    } else if (exit_code == exit_interrupted) {
      ++interrupted;
      what = "interrupted (its checkpoint resumes it)";
    } else {
      const std::string reason = failure_reason(folder / "logs" / (t.name + ".log"), r.log_offset, exit_code);
      failures.push_back("trial " + std::to_string(r.trial + 1) + " (" + t.label() + "): " + reason);
      what = "FAILED: " + reason;
    }
    out << "sweep: trial " << (r.trial + 1) << "/" << trials.size() << " " << what << " (" << t.label() << ") | "
        << done << " done, " << running.size() << " running, " << pending.size() << " left";
    if (finished_here > 0 && pending.size() + running.size() > 0) {
      const double per_trial = seconds_finished / double(finished_here);
      const double left = double(pending.size() + running.size()) * per_trial / double(jobs);
      out << ", ETA " << duration_text(left);
    }
    out << "\n" << std::flush;
  }
  const double total = std::chrono::duration<double>(Clock::now() - start).count();
  lock.reset();

  try {
    write_report(build_report(folder), folder, out);
  } catch (const std::exception& e) {
    out << "sweep: no report: " << first_line(e.what()) << "\n";
  }
  out << "sweep: " << done << " of " << trials.size() << " trials finished, " << failures.size() << " failed, "
      << interrupted << " interrupted; " << duration_text(total) << " with " << jobs << " at a time\n";
  if (interrupted || interrupt_requested()) {
    out << "sweep: interrupted; run the same command again to resume\n";
    return exit_interrupted;
  }
  if (!failures.empty()) throw Error(std::to_string(failures.size()) + " trial(s) failed: " + join(failures, "; "));
  return exit_ok;
}

}  // namespace plugtrain
