#include "sweep/slurm_sweep.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>

#include "config/config_error.h"
#include "plugins/plugin_permissions.h"
#include "sweep/rung_report.h"
#include "sweep/slurm_commands.h"
#include "sweep/sweep_report.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/folder_lock.h"
#include "util/text.h"

namespace plugtrain {

namespace fs = std::filesystem;

namespace {

std::string fnv1a_hex8(const std::string& s) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%08llx", static_cast<unsigned long long>(fnv1a_64(s) & 0xffffffffull));
  return buf;
}

std::string quoted_command(const std::vector<std::string>& argv) {
  std::vector<std::string> parts;
  for (const auto& a : argv) parts.push_back(shell_quoted(a));
  return join(parts, " ");
}

// sbatch options every job of the sweep gets: where it may run and for how long, and the user's own.
std::vector<std::string> common_options(const SweepRequest& r) {
  std::vector<std::string> o;
  if (!r.partition.empty()) o.push_back("--partition=" + r.partition);
  if (!r.time_limit.empty()) o.push_back("--time=" + r.time_limit);
  o.insert(o.end(), r.sbatch_args.begin(), r.sbatch_args.end());
  return o;
}

// The same sweep again, as the follow-up job runs it.
std::vector<std::string> follow_up_command(const SweepRequest& r) {
  std::vector<std::string> argv{r.executable.string(), "sweep", fs::absolute(r.experiment_file).string(), "--slurm",
                                "--continue"};
  for (const auto& o : r.overrides) argv.insert(argv.end(), {"--set", o});
  for (const auto& p : r.plugin_paths) argv.insert(argv.end(), {"--plugin-path", fs::absolute(p).string()});
  if (insecure_plugins_allowed()) argv.push_back("--allow-insecure-plugins");
  if (r.host_cpu_only) argv.push_back("--no-gpu");
  if (!r.partition.empty()) argv.insert(argv.end(), {"--partition", r.partition});
  if (!r.time_limit.empty()) argv.insert(argv.end(), {"--time", r.time_limit});
  if (r.gpus_per_trial > 0) argv.insert(argv.end(), {"--gpus-per-trial", std::to_string(r.gpus_per_trial)});
  for (const auto& a : r.sbatch_args) argv.push_back("--sbatch-arg=" + a);
  return argv;
}

// Array task i trains work[i]: its output appended to the trial's log, its exit code recorded.
std::string array_script(const SweepRequest& request, const SweepSetup& setup, const std::vector<TrialWork>& work) {
  const fs::path logs = fs::absolute(setup.folder / "logs");
  // On the CPU each task uses the cores Slurm gave it, unless the experiment says otherwise.
  const bool own_threads = setup.base.train.threads == 0 &&
                           std::none_of(setup.spec.axes.begin(), setup.spec.axes.end(),
                                        [](const auto& a) { return a.key == "train.threads"; });
  std::ostringstream s;
  s << "#!/bin/bash\n# Written by `plugtrain sweep --slurm`: array task i trains the i-th trial below.\n";
  s << "case \"$SLURM_ARRAY_TASK_ID\" in\n";
  for (std::size_t i = 0; i < work.size(); ++i)
    s << "  " << i << ") trial=" << shell_quoted(setup.trials[work[i].trial].name)
      << "; command=(" << quoted_command(trial_command(request, setup, work[i], "")) << ") ;;\n";
  s << "  *) echo \"plugtrain: error: array task $SLURM_ARRAY_TASK_ID is not in $0\" >&2; exit 2 ;;\nesac\n";
  if (own_threads) s << "command+=(--set \"train.threads=${SLURM_CPUS_PER_TASK:-1}\")\n";
  // [sweep] nodes: the trial's ranks are one step over the task's nodes, which meet at its first
  // node as `srun plugtrain run` does; a rank that fails ends the others at once.
  if (setup.spec.nodes > 0) s << "command=(srun --kill-on-bad-exit=1 \"${command[@]}\")\n";
  // Slurm's SIGTERM (scancel, a time limit, preemption, a requeue) goes on to the trial, which
  // writes its checkpoint and exits 130; this script waits for that and records it, so the job
  // ends only when the trial has.
  s << "logs=" << shell_quoted(logs.string()) << "\n"
    << "rm -f \"$logs/$trial.exit\"\n"
    << "echo \"${SLURM_JOB_NODELIST:-}\" >\"$logs/$trial.nodes\"\n"
    << "\"${command[@]}\" >>\"$logs/$trial.log\" 2>&1 &\npid=$!\n"
    << "terminated=0\ntrap 'terminated=1; kill -TERM \"$pid\" 2>/dev/null' TERM INT\n"
    << "wait \"$pid\"\ncode=$?\n"
    << "if [ \"$terminated\" = 1 ]; then wait \"$pid\"; code=$?; fi\n"
    << "echo \"$code\" >\"$logs/$trial.exit.tmp-$$\" && mv \"$logs/$trial.exit.tmp-$$\" \"$logs/$trial.exit\"\n"
    << "exit \"$code\"\n";
  return s.str();
}

// [sweep] nodes beyond what the cluster (or the partition) has: refused before anything is
// written, where sinfo can tell (sbatch would refuse each array only once it is submitted).
void check_trial_nodes(const SweepRequest& request, const SweepSpec& spec) {
  if (spec.nodes <= 1) return;
  const std::optional<std::size_t> nodes = slurm_node_count(request.partition);
  if (nodes && std::size_t(spec.nodes) > *nodes)
    throw ConfigError(spec.nodes_where + ": sweep.nodes = " + std::to_string(spec.nodes) + ", but " +
                      (request.partition.empty() ? "the cluster" : "partition " + request.partition) + " has " +
                      std::to_string(*nodes) + (*nodes == 1 ? " node" : " nodes") + " (sinfo)");
}

// sbatch --parsable prints "JOBID" or "JOBID;CLUSTER"; anything else is Slurm's refusal.
std::string submit(const std::vector<std::string>& options, const fs::path& script, const std::string& what) {
  std::vector<std::string> args{"--parsable"};
  args.insert(args.end(), options.begin(), options.end());
  args.push_back(script.string());
  Result<CommandOutput> r = run_command("sbatch", args);
  if (!r) throw Error("--slurm: " + r.why_not());
  const std::string& text = r.value().output;
  // The id is the last line that is one (a site's warnings or messages may come before it).
  std::string id, line;
  for (std::istringstream lines(text); std::getline(lines, line);) {
    const std::string first = line.substr(0, line.find(';'));
    if (!first.empty() && first.find_first_not_of("0123456789") == std::string::npos) id = first;
  }
  if (!r.value().status.succeeded() || id.empty()) {
    // Slurm's own words: "sbatch: error: invalid partition specified: gpu" (the last error line).
    std::string reason = first_line(text);
    for (std::istringstream lines(text); std::getline(lines, line);)
      if (line.find("error") != std::string::npos) reason = line;
    throw Error("--slurm: sbatch refused the " + what + ": " + (reason.empty() ? r.value().status.text() : reason));
  }
  return id;
}

}  // namespace

std::string slurm_job_name(const fs::path& sweep_folder) {
  const fs::path absolute = fs::weakly_canonical(fs::absolute(sweep_folder));
  return "plugtrain-" + absolute.parent_path().filename().string() + "-" + fnv1a_hex8(absolute.string());
}

std::vector<SlurmTask> submitted_slurm_tasks(const fs::path& sweep_folder) {
  std::vector<SlurmTask> tasks;
  std::ifstream in(sweep_folder / "slurm" / "jobs.tsv");
  for (std::string line; std::getline(in, line);) {
    std::istringstream cells(line);
    SlurmTask t;
    std::string index, until, epochs;
    if (std::getline(cells, t.job_id, '\t') && std::getline(cells, index, '\t') && std::getline(cells, t.trial, '\t') &&
        std::getline(cells, until, '\t') && std::getline(cells, epochs, '\t')) {
      try {
        t.index = std::stoul(index);
        t.until_epoch = std::stoll(until);
        t.epochs_at_start = std::stoll(epochs);
        tasks.push_back(std::move(t));
      } catch (const std::logic_error&) {
        // A row cut short (a submission killed while writing it): not a task of ours.
      }
    }
  }
  return tasks;
}

namespace {

// What Slurm still has of this sweep: those trials are not submitted again.
struct SlurmActivity {
  std::set<std::string> trials, jobs;       // queued or running
  std::map<std::string, SlurmTask> newest;  // each trial's newest array task
};

SlurmActivity slurm_activity(const fs::path& folder, const std::string& name) {
  const auto queued = queued_array_tasks(name);
  if (!queued) throw Error("--slurm: squeue could not list the jobs named " + name + " (is slurmctld reachable?)");
  SlurmActivity activity;
  for (const SlurmTask& t : submitted_slurm_tasks(folder)) {
    activity.newest[t.trial] = t;
    if (queued->count(t.id())) {
      activity.trials.insert(t.trial);
      activity.jobs.insert(t.job_id);
    }
  }
  return activity;
}

// Before deciding what is next: a person starting the command retries failed trials (the
// sweep's own follow-up does not), and a task that ended without finishing an epoch (cancelled,
// killed before its first step, a node that failed) counts as failed: submitting it again by
// itself could repeat that forever.
void settle_ended_tasks(const SweepRequest& request, const SweepSetup& setup, const SlurmActivity& activity) {
  const fs::path& folder = setup.folder;
  const std::vector<TrialFiles> files = read_trials(setup);
  for (std::size_t i = 0; i < setup.trials.size(); ++i) {
    const std::string& trial = setup.trials[i].name;
    if (activity.trials.count(trial)) continue;
    const bool failed = files[i].last_exit && failed_exit(*files[i].last_exit);
    if (!request.continuing) {
      if (failed) forget_trial_exit(folder, trial);
    } else if (const auto t = activity.newest.find(trial); t != activity.newest.end() && !failed &&
                                                           files[i].state != TrialState::finished &&
                                                           files[i].epochs_done <= t->second.epochs_at_start) {
      record_trial_exit(folder, trial, exit_failure);
      std::ofstream(trial_log(folder, trial), std::ios::app)
          << "plugtrain: error: Slurm task " << t->second.id() << " ended before finishing an epoch (see "
          << (folder / "slurm").string() << "/array-" << t->second.id() << ".out)\n";
    }
  }
}

// The sweep is over: the report, and the trials that failed.
int finish_slurm_sweep(const SweepSetup& setup, std::ostream& out) {
  const fs::path& folder = setup.folder;
  write_report(build_report(folder), folder, out);
  write_rung_report(folder, out);
  std::vector<std::string> failed;
  for (const Trial& t : setup.trials) {
    const TrialFiles f = read_trial_files(folder, t.name);
    if (f.last_exit && failed_exit(*f.last_exit))
      failed.push_back(t.label() + ": " + trial_failure_reason(folder, t.name, 0, *f.last_exit));
  }
  if (!failed.empty()) throw Error(std::to_string(failed.size()) + " trial(s) failed: " + join(failed, "; "));
  out << "sweep: every trial is done\n";
  return exit_ok;
}

// One job array of `work`; its id. jobs.tsv records each task's trial first, then the script
// takes the job's name (Slurm keeps its own copy).
std::string submit_array(const SweepRequest& request, const SweepSetup& setup, const std::vector<TrialWork>& work,
                         const std::vector<TrialFiles>& files, const std::string& name, std::ostream& out) {
  const fs::path& folder = setup.folder;
  const fs::path script = folder / "slurm" / "array.sh";
  write_file_atomically(script, array_script(request, setup, work));
  std::vector<std::string> options{"--array=0-" + std::to_string(work.size() - 1),
                                   "--job-name=" + name,
                                   "--requeue",
                                   "--open-mode=append",
                                   "--chdir=" + fs::current_path().string(),
                                   "--output=" + fs::absolute(folder / "slurm" / "array-%A_%a.out").string()};
  if (request.gpus_per_trial > 0) options.push_back("--gpus-per-task=" + std::to_string(request.gpus_per_trial));
  if (setup.spec.nodes > 0) {
    options.push_back("--nodes=" + std::to_string(setup.spec.nodes));
    options.push_back("--ntasks-per-node=" + std::to_string(setup.spec.tasks_per_node));
  }
  for (const auto& o : common_options(request)) options.push_back(o);
  const std::string id = submit(options, script, "job array");
  {
    std::ofstream rows(folder / "slurm" / "jobs.tsv", std::ios::app);
    for (std::size_t i = 0; i < work.size(); ++i)
      rows << id << "\t" << i << "\t" << setup.trials[work[i].trial].name << "\t" << work[i].until_epoch << "\t"
           << files[work[i].trial].epochs_done << "\n";
  }
  std::error_code ec;
  fs::rename(script, folder / "slurm" / ("array-" + id + ".sh"), ec);
  out << "sweep: submitted job array " << id << " (" << work.size() << (work.size() == 1 ? " task" : " tasks")
      << ", job name " << name << ")\n";
  return id;
}

// The follow-up: when every job it depends on has ended, the same sweep again decides what is next.
void submit_follow_up(const SweepRequest& request, const fs::path& folder, const std::string& name,
                      const std::vector<std::string>& dependencies, std::ostream& out) {
  const fs::path next = folder / "slurm" / "next.sh";
  write_file_atomically(next,
                        "#!/bin/bash\n# Written by `plugtrain sweep --slurm`: continues the sweep once its "
                        "array tasks have ended.\nexec " +
                            quoted_command(follow_up_command(request)) + "\n");
  std::vector<std::string> options{"--job-name=" + name + "-next", "--dependency=afterany:" + join(dependencies, ":"),
                                   "--chdir=" + fs::current_path().string(),
                                   "--output=" + fs::absolute(folder / "slurm" / "next-%j.out").string()};
  for (const auto& o : common_options(request)) options.push_back(o);
  const std::string next_id = submit(options, next, "follow-up job");
  out << "sweep: job " << next_id << " continues the sweep when those end; follow it with: plugtrain sweep --status "
      << folder.string() << "\n";
}

}  // namespace

int submit_sweep_to_slurm(const SweepRequest& request, const SweepSetup& setup, std::ostream& out) {
  if (!find_on_path("sbatch")) throw Error("--slurm: no sbatch on PATH (run the sweep on a Slurm login node)");
  check_trial_nodes(request, setup.spec);
  const fs::path& folder = setup.folder;
  const std::string name = slurm_job_name(folder);
  const SlurmActivity active = slurm_activity(folder, name);
  const std::optional<FolderLock> lock =
      request.dry_run ? std::nullopt
                      : std::optional<FolderLock>(std::in_place, folder, ".sweep.lock", "plugtrain sweep");
  if (!request.dry_run) settle_ended_tasks(request, setup, active);
  const std::vector<TrialFiles> files = read_trials(setup);
  std::vector<TrialWork> work;
  for (const TrialWork& w : next_work(setup, files, true))
    if (!active.trials.count(setup.trials[w.trial].name)) work.push_back(w);
  if (!request.dry_run) {
    fs::create_directories(folder / "logs");
    fs::create_directories(folder / "slurm");
    write_sweep_manifest(setup, request);
  }
  out << "sweep: " << setup.trials.size() << " trials (" << word_of(setup.spec.method) << ") in " << folder.string()
      << " on Slurm; " << work.size() << " to submit, " << active.trials.size() << " still queued or running\n";
  if (setup.schedule.kind != SweepScheduler::none) out << "sweep: " << schedule_line(setup.schedule) << "\n";
  if (request.dry_run) {
    for (const TrialWork& w : work)
      out << "  " << (w.trial + 1) << ". " << setup.trials[w.trial].label()
          << (w.until_epoch > 0 && w.until_epoch < setup.schedule.max_epochs
                  ? " (to epoch " + std::to_string(w.until_epoch) + ")"
                  : "")
          << "\n";
    return exit_ok;
  }
  if (work.empty() && active.trials.empty()) return finish_slurm_sweep(setup, out);
  std::vector<std::string> dependencies(active.jobs.begin(), active.jobs.end());
  if (!work.empty()) dependencies.push_back(submit_array(request, setup, work, files, name, out));
  submit_follow_up(request, folder, name, dependencies, out);
  return exit_ok;
}

}  // namespace plugtrain
