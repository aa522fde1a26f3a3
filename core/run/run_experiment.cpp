#include "run/run_experiment.h"

#include <ostream>

#include "distributed/collectives.h"
#include "distributed/launcher.h"
#include "plugins/cpu_fallbacks.h"
#include "process/interrupt.h"
#include "run/classes_file.h"
#include "run/run_stages.h"
#include "version.h"

namespace plugtrain {

namespace {

// devices = N without a launcher around us: this process only starts N workers (copies of
// this command) and waits for them; its exit code is theirs.
RunResult launch_workers(const RunRequest& request, const Experiment& e, const RunPlan& plan, std::ostream& console) {
  for (const auto& w : plan.devices.warnings) console << "warning: " << w << "\n";
  for (const auto& line : plan.batch_lines) console << "batch: " << line << "\n";
  if (request.command_line.empty()) throw DistributedError("cannot start worker processes: no command line given");
  LaunchRequest launch;
  launch.command = request.command_line;
  // "auto" was searched here, once: every worker trains on what it found.
  if (!e.data.batch_size) launch.command.insert(launch.command.end(), {"--set", "data.batch_size=" + std::to_string(plan.batch.per_device)});
  launch.workers = plan.processes;
  // The workers notice a failed rank within the collective timeout; this is the backstop.
  launch.grace = std::chrono::milliseconds(static_cast<std::int64_t>(e.distributed.timeout * 1000) + 5000);
  RunResult launched;
  launched.launched_workers = true;
  launched.world_size = plan.processes;
  launched.workers_exit_code = launch_local_workers(launch, console);
  return launched;
}

// The loggers' run: rank 0's, with the facts the plan decided.
std::shared_ptr<PluginLoggers> start_loggers(ValidatedRun& run, const RunPlan& plan, RunOutputs& outputs) {
  if (!plan.writes_outputs() || run.loggers.empty()) return nullptr;
  LoggerRunFacts facts;
  facts.folder = outputs.run_folder;
  facts.experiment = run.experiment.experiment.name;
  // "<name>/version_N", or a sweep trial's "<name>/sweep/<trial>/version_N": the folder below the output folder.
  const std::filesystem::path output = std::filesystem::absolute(run.experiment.experiment.output);
  facts.run_name = std::filesystem::absolute(outputs.run_folder).lexically_relative(output).lexically_normal().string();
  if (facts.run_name.empty() || facts.run_name.rfind("..", 0) == 0)
    facts.run_name = run.experiment.experiment.name + "/" + outputs.run_folder.filename().string();
  facts.params = logged_params(plan.record);
  facts.tags = {{"plugtrain.version", PLUGTRAIN_VERSION},
                {"plugtrain.backend", plan.choice.backend->name()},
                {"plugtrain.device", plan.device.str()},
                {"plugtrain.world_size", std::to_string(plan.processes)},
                {"plugtrain.run_folder", std::filesystem::absolute(outputs.run_folder).string()}};
  facts.parents = logger_parents_from_environment();
  return std::make_shared<PluginLoggers>(std::move(run.loggers), std::move(facts), outputs.log);
}

PlanSummary plan_summary(const RunPlan& plan) {
  PlanSummary s;
  s.strategy = plan.shard ? "fsdp" : to_string(plan.strategy);
  s.world_size = plan.processes;
  if (plan.world) s.world_source = plan.world->source;
  s.devices.push_back(plan.device.str());
  if (plan.strategy == Strategy::dp)  // the further replicas', as build_strategy.cpp places them
    for (std::size_t i = 1; i < plan.devices.devices.size(); ++i)
      s.devices.push_back(device_of(plan.capabilities.device_type, plan.devices.devices[i]).str());
  s.devices_used = plan.devices_used;
  s.per_device_batch = plan.batch.per_device;
  s.global_batch = plan.batch.global;
  s.lr = plan.batch.lr;
  s.lr_factor = plan.batch.lr_factor;
  return s;
}

RunEnd run_end(const TrainSummary& summary) {
  return summary.interrupted || summary.paused ? RunEnd::killed : RunEnd::finished;
}

}  // namespace

RunResult run_experiment(const RunRequest& request, std::ostream& console) {
  return run_experiment(run_stages(), request, console);
}

RunResult run_experiment(const RunStages& stages, const RunRequest& request, std::ostream& console) {
  ValidatedRun run = stages.validate(request);
  const Experiment& e = run.experiment;
  const SelectionLimits limits{request.host_cpu_only, request.disable_backends};
  const std::optional<World> world = world_from_environment();
  const TrialResults trials = stages.trials(run, limits, world);
  const RunPlan plan = stages.plan(run, trials, limits, world);
  if (plan.launches_workers) return launch_workers(request, e, plan, console);

  // This run's own fallbacks: the trial steps ran steps in this process too.
  const FallbackCounts fallbacks_before = plan.choice.backend->runtime_counts(true).cpu_fallbacks;
  std::unique_ptr<RunOutputs> outputs = stages.prepare_outputs(run, plan, console);
  std::ostream& log = outputs->log;
  print_plan(plan, e, log);
  outputs->loggers = start_loggers(run, plan, *outputs);  // a failure before finish() ends them as failed
  RunResult result;
  result.world_size = plan.processes;
  result.plan = plan_summary(plan);
  result.backend = plan.choice.backend->name();
  result.device = plan.device.str();
  result.step_host_reads = plan.step_host_reads;
  result.run_folder = outputs->run_folder;

  // In a ddp run, from here on a failure of this rank is told to the others through the
  // store, so they can name it; a failure of a collective names the rank at fault.
  std::unique_ptr<Collectives> collectives = connect_ranks(plan, e);
  std::int64_t parameters = 0;
  try {
    std::unique_ptr<BuiltRun> built =
        stages.build(run, plan, collectives.get(), plan.writes_outputs() ? outputs.get() : nullptr, log);
    parameters = built->parameters;
    // What the model's outputs mean, for `plugtrain predict` (which reads no data set).
    if (plan.writes_outputs()) write_classes_file(outputs->run_folder, built->data.train);
    InterruptScope interrupts;  // SIGINT/SIGTERM stop after the current step with a checkpoint
    result.summary = stages.train(*built);
  } catch (const CollectiveError& error) {
    if (!collectives) throw;
    throw DistributedError(collectives->explain_failure("training", error));
  } catch (const std::exception& error) {
    if (!collectives) throw;
    collectives->announce_failure(error.what());
    throw DistributedError("rank " + std::to_string(plan.rank) + ": " + error.what());
  }
  // --resume auto of a run that had already ended trains nothing: its summary.json, when the
  // run got as far as writing it, stays as that run wrote it (with its real timings).
  const bool ended_before =
      result.summary.already_ended && std::filesystem::exists(outputs->run_folder / "summary.json");
  result.cpu_fallbacks = fallbacks_between(fallbacks_before, plan.choice.backend->runtime_counts(true).cpu_fallbacks);
  if (plan.writes_outputs() && !ended_before) stages.summarise(e, result, parameters, *outputs);
  if (ended_before) result.summary_file = outputs->run_folder / "summary.json";
  if (outputs->loggers) {
    // The weights are exported only for a logger that takes the run's files.
    const bool files = outputs->loggers->any_takes_files();
    outputs->loggers->finish(
        run_end(result.summary),
        files ? run_artifacts(outputs->run_folder, outputs->checkpoints, log) : std::vector<RunArtifact>{});
  }
  return result;
}

}  // namespace plugtrain
