#include "sweep/sweep_plan.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "config/config_error.h"
#include "config/experiment_loader.h"
#include "config/toml_text.h"
#include "plugins/plugin_permissions.h"
#include "run/plan.h"
#include "run/validate.h"
#include "util/atomic_file.h"

namespace plugtrain {

namespace fs = std::filesystem;

namespace {

// The `plugtrain run` request of one trial (for validation, and as the child's arguments).
RunRequest trial_request(const SweepRequest& sweep, const SweepSetup& setup, const Trial& trial,
                         const std::string& threads) {
  RunRequest r;
  r.experiment_file = sweep.experiment_file;
  // The cores' share first: a thread count the experiment, --set or the trial names wins.
  if (!threads.empty()) r.overrides.push_back("train.threads=" + threads);
  // With a rung scheduler every trial has the full run's schedule and pauses at its rungs.
  if (setup.schedule.kind != SweepScheduler::none)
    r.overrides.push_back("train.epochs=" + std::to_string(setup.schedule.max_epochs));
  for (const auto& o : sweep.overrides) r.overrides.push_back(o);
  for (const auto& a : trial.set_arguments()) r.overrides.push_back(a);
  r.overrides.push_back("experiment.name=" + toml_quoted(trial.name));
  r.overrides.push_back("experiment.output=" + toml_quoted(setup.folder.string()));
  r.plugin_paths = sweep.plugin_paths;
  r.host_cpu_only = sweep.host_cpu_only;
  r.sweep_trial = true;
  return r;
}

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

SweepSetup prepare_sweep(const SweepRequest& request) {
  SweepSetup setup;
  ExperimentFile file = parse_experiment_file(request.experiment_file);
  for (const auto& o : request.overrides) apply_override(file, o);
  setup.spec = read_sweep(file);
  if (setup.spec.nodes > 0 && !request.slurm)
    throw ConfigError(setup.spec.nodes_where + ": sweep.nodes = " + std::to_string(setup.spec.nodes) +
                      " trains each trial across Slurm nodes, so it needs --slurm (without it every trial runs here "
                      "as one process)");
  setup.trials = setup.spec.expand();
  setup.base = resolve_experiment(file);
  setup.folder = fs::path(setup.base.experiment.output) / setup.base.experiment.name / "sweep";
  {
    // A plugin's task is known by name once its plugin is loaded: the schedule names its metric.
    SearchOptions search;
    search.cli_paths = request.plugin_paths;
    for (const auto& p : setup.base.plugins.paths) search.experiment_paths.emplace_back(p);
    const PluginHost host(search);
    adopt_plugin_tasks(host);
    setup.loggers = resolve_loggers(file, setup.base, host);
    setup.schedule = resolve_rung_schedule(setup.spec.scheduler, setup.base, host.datasets().find(setup.base.data.dataset_name));
  }
  if (setup.schedule.kind != SweepScheduler::none)
    for (const auto& axis : setup.spec.axes)
      if (axis.key == "train.epochs")
        throw ConfigError(request.experiment_file.string() + ":" + std::to_string(axis.line) + ":" +
                          std::to_string(axis.column) + ": sweep.train.epochs is varied, but with scheduler = \"" +
                          word_of(setup.schedule.kind) + "\" the scheduler decides each trial's epochs (max_epochs)");

  if (setup.schedule.kind != SweepScheduler::none && setup.base.checkpoint.save == CheckpointSave::none)
    throw ConfigError(setup.spec.scheduler.where + ": scheduler = \"" + word_of(setup.schedule.kind) +
                      "\" continues promoted trials from their checkpoints, but checkpoint.save = \"none\"");

  // Every trial is checked before the first starts; the first one's plan says how many run
  // at a time and on which devices.
  int jobs = request.jobs;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  for (std::size_t i = 0; i < setup.trials.size(); ++i) {
    try {
      ValidatedRun run = validate(trial_request(request, setup, setup.trials[i], ""));
      // On Slurm the trials run on the cluster's nodes, not on this (login) node: only validate.
      if (i > 0 || request.slurm) continue;
      const SelectionLimits limits{request.host_cpu_only, {}};
      const RunPlan plan = plan_run(run, run_trials(run, limits, std::nullopt), limits, std::nullopt);
      const std::size_t devices = plan.choice.backend->probe().devices.size();
      if (jobs == 0) jobs = plan.capabilities.host_cpu ? 1 : int(std::max<std::size_t>(1, devices));
      if (!plan.capabilities.host_cpu && jobs > 1 && !request.slurm) {
        setup.device_variable = plan.capabilities.visible_devices_variable;
        if (!setup.device_variable.empty()) setup.device_ids = visible_devices(setup.device_variable, devices);
        if (std::size_t(jobs) > std::max<std::size_t>(devices, 1))
          throw ConfigError("--jobs " + std::to_string(jobs) + " trials at a time on " + plan.choice.backend->name() +
                            ", which has " + std::to_string(devices) + " device(s): one trial per device at most");
      }
    } catch (const Error& e) {
      throw ConfigError("sweep trial " + std::to_string(i + 1) + " of " + std::to_string(setup.trials.size()) + " (" +
                        setup.trials[i].label() + "): " + e.what());
    }
  }
  setup.jobs = std::max(1, jobs);
  // On the CPU the trials share the cores: each gets its part as intra-op threads.
  if (setup.device_variable.empty() && setup.jobs > 1 && setup.base.train.threads == 0)
    setup.threads = std::max(1, int(cores) / setup.jobs);
  return setup;
}

std::vector<TrialFiles> read_trials(const SweepSetup& setup) {
  std::vector<TrialFiles> files;
  for (const Trial& t : setup.trials) files.push_back(read_trial_files(setup.folder, t.name));
  return files;
}

std::vector<TrialWork> next_work(const SweepSetup& setup, const std::vector<TrialFiles>& files, bool keep_failures) {
  std::vector<TrialWork> work;
  if (setup.schedule.kind == SweepScheduler::none) {
    for (std::size_t i = 0; i < files.size(); ++i) {
      const bool failed = keep_failures && files[i].last_exit && failed_exit(*files[i].last_exit);
      if (files[i].state != TrialState::finished && !failed) work.push_back({i, 0});
    }
    return work;
  }
  std::vector<TrialProgress> progress;
  for (const TrialFiles& f : files) progress.push_back(trial_progress(f, setup.schedule.metric, keep_failures));
  const std::vector<TrialDecision> decisions = decide_rungs(setup.schedule, progress);
  for (std::size_t i = 0; i < decisions.size(); ++i)
    if (decisions[i].verdict == TrialVerdict::run) work.push_back({i, decisions[i].until_epoch});
  return work;
}

std::vector<std::string> trial_command(const SweepRequest& request, const SweepSetup& setup, const TrialWork& work,
                                       const std::string& threads_argument) {
  const RunRequest r = trial_request(request, setup, setup.trials[work.trial], threads_argument);
  std::vector<std::string> argv{request.executable.string(), "run", r.experiment_file.string(), "--sweep-trial"};
  for (const auto& o : r.overrides) argv.insert(argv.end(), {"--set", o});
  for (const auto& p : r.plugin_paths) argv.insert(argv.end(), {"--plugin-path", p.string()});
  if (insecure_plugins_allowed()) argv.push_back("--allow-insecure-plugins");
  if (r.host_cpu_only) argv.push_back("--no-gpu");
  argv.insert(argv.end(), {"--resume", "auto"});
  if (work.until_epoch > 0 && work.until_epoch < setup.schedule.max_epochs)
    argv.insert(argv.end(), {"--stop-after-epoch", std::to_string(work.until_epoch)});
  return argv;
}

void write_sweep_manifest(const SweepSetup& setup, const SweepRequest& request) {
  nlohmann::json trials = nlohmann::json::array();
  for (const Trial& t : setup.trials) trials.push_back({{"name", t.name}, {"label", t.label()}});
  const RungSchedule& s = setup.schedule;
  const nlohmann::json manifest = {
      {"experiment", fs::absolute(request.experiment_file).string()},
      {"trials", trials},
      {"scheduler",
       {{"kind", word_of(s.kind)}, {"min_epochs", s.min_epochs}, {"max_epochs", s.max_epochs},
        {"reduction_factor", s.reduction_factor}, {"brackets", s.brackets}, {"metric", s.metric},
        {"mode", word_of(s.maximise ? Direction::max : Direction::min)}}}};
  fs::create_directories(setup.folder);
  write_file_atomically(setup.folder / "trials.json", manifest.dump(2) + "\n");
}

std::optional<SweepManifest> read_sweep_manifest(const fs::path& sweep_folder) {
  const fs::path file = sweep_folder / "trials.json";
  if (!fs::exists(file)) return std::nullopt;
  try {
    const nlohmann::json j = nlohmann::json::parse(std::ifstream(file));
    SweepManifest m;
    m.experiment = j.at("experiment").get<std::string>();
    for (const auto& t : j.at("trials")) {
      m.names.push_back(t.at("name").get<std::string>());
      m.labels.push_back(t.at("label").get<std::string>());
    }
    const nlohmann::json& s = j.at("scheduler");
    RungSchedule& r = m.schedule;
    r.kind = choice_named<SweepScheduler>(s.at("kind").get<std::string>()).value_or(SweepScheduler::none);
    r.min_epochs = s.at("min_epochs").get<std::int64_t>();
    r.max_epochs = s.at("max_epochs").get<std::int64_t>();
    r.reduction_factor = s.at("reduction_factor").get<std::int64_t>();
    r.brackets = s.at("brackets").get<std::int64_t>();
    r.metric = s.at("metric").get<std::string>();
    r.maximise = choice_named<Direction>(s.at("mode").get<std::string>()) != Direction::min;
    return m;
  } catch (const nlohmann::json::exception& e) {
    throw Error(file.string() + ": not a sweep's trial list: " + e.what());
  }
}

}  // namespace plugtrain
