#include "run/build.h"

#include <fstream>
#include <optional>
#include <ostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include <ATen/Context.h>
#include <ATen/Parallel.h>

#include "checkpoint/checkpoint.h"
#include "config/resolved_experiment.h"
#include "data/from_experiment.h"
#include "distributed/collectives.h"
#include "distributed/device_collective.h"
#include "optim/fused_optimizers.h"
#include "optim/optimizers.h"
#include "plugins/plugin_error.h"
#include "run/build_strategy.h"
#include "run/build_task.h"
#include "run/data_splits.h"
#include "run/device_offload.h"
#include "run/device_settings.h"
#include "train/callbacks/checkpoint_saver.h"
#include "train/callbacks/console_log.h"
#include "train/callbacks/early_stopping.h"
#include "train/callbacks/metrics_csv.h"
#include "train/callbacks/plugin_loggers.h"
#include "train/callbacks/profiler_callback.h"
#include "train/callbacks/progress_bar_callback.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/text.h"

namespace plugtrain {

namespace {

// The per-channel statistics data.normalize = "dataset" computed when a run began, beside it.
std::filesystem::path normalization_file(const RunOutputs* outputs) {
  return outputs && !outputs->run_folder.empty() ? outputs->run_folder / "normalization.json" : std::filesystem::path();
}

}  // namespace

std::optional<data::Normalization> read_normalization(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return std::nullopt;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    data::Normalization n{j.at("mean").get<std::vector<double>>(), j.at("std").get<std::vector<double>>()};
    return n;
  } catch (const std::exception& error) {
    throw Error(file.string() + ": not the statistics a run stores (" + first_line(error.what()) +
                "); delete it to compute them again");
  }
}

namespace {

// The run's data (read by an earlier stage, or now), normalised with the statistics stored in
// the run folder when there are some, and those kept there when there are none yet.
data::LoadedData load_data(const ValidatedRun& run, const RunOutputs* outputs) {
  const Experiment& e = run.experiment;
  const std::filesystem::path stored = normalization_file(outputs);
  const std::optional<data::Normalization> statistics = stored.empty() ? std::nullopt : read_normalization(stored);
  data::LoadedData d = run.data->get(statistics, stored);
  const data::Normalization& n = d.data.train.normalization;
  // Kept beside the run, so a resume normalises exactly as the run began.
  if (!stored.empty() && !statistics && outputs->writes() && e.data.normalize == Normalize::dataset &&
      e.data.mean.empty() && !n.empty())
    write_file_atomically(stored, nlohmann::json{{"mean", n.mean}, {"std", n.std}}.dump(2) + "\n");
  return d;
}

}  // namespace

ModelDescription model_description(const data::Dataset& train, std::int64_t model_outputs) {
  ModelDescription d;
  const bool lengths = train.fields.count("input_lengths") > 0;
  const c10::ScalarType input = train.tokens() ? c10::ScalarType::Long : c10::ScalarType::Float;
  d.batch.add("input", {input, train.sample_shape, lengths ? "input_lengths" : ""});
  for (const auto& [name, values] : train.fields)
    d.batch.add(name, {values.scalar_type(), values.sizes().slice(1).vec(), ""});
  d.target.kind_ = DatasetTargets(int(train.target_kind));  // the same kinds in the same order
  d.target.classes_ = train.num_classes;
  if (train.labels.defined()) d.target.shape_ = train.labels.sizes().slice(1).vec();
  d.target.class_names_ = train.class_names;
  d.target.model_outputs_ = model_outputs;
  return d;
}

std::shared_ptr<Model> build_model(const RegisteredModel& entry, const ModelDescription& description, const Experiment& e) {
  std::shared_ptr<Model> model = call_plugin(entry.plugin, "building model", [&] {
    return entry.spec.batch_factory(description.batch, description.target, e.model.options);
  });
  if (!model) throw PluginError(entry.plugin, "model factory for '" + e.model.name + "' returned nothing");
  return model;
}

std::shared_ptr<Model> build_image_model(const RegisteredModel& entry, const std::vector<std::int64_t>& input_shape,
                                         std::int64_t classes, const Options& options) {
  const ModelDescription description = image_model_description(input_shape, classes);
  std::shared_ptr<Model> model = call_plugin(entry.plugin, "building model", [&] {
    return entry.spec.batch_factory(description.batch, description.target, options);
  });
  if (!model) throw PluginError(entry.plugin, "model factory for '" + entry.spec.name + "' returned nothing");
  return model;
}

namespace {

std::vector<std::unique_ptr<Callback>> make_callbacks(const Experiment& e, const RunPlan& plan, const Task& task,
                                                      bool has_val, const RunOutputs* outputs, std::ostream& log) {
  const std::vector<TaskMetric>& training = task.metrics(TaskPass::training);
  const std::vector<TaskMetric>& evaluation = task.metrics(TaskPass::evaluation);
  // Validation checked the names against the task's metrics.
  const std::string split = has_val ? "val" : "test";
  auto monitor = [&](const std::optional<std::string>& name, std::optional<Direction> mode) {
    return find_monitor(training, evaluation, name, mode, split).value();
  };
  std::vector<std::unique_ptr<Callback>> callbacks;
  // The order matters: the bar clears before a line is printed, and early stopping decides
  // before the checkpoint of the epoch is written.
  if (outputs && outputs->terminal) callbacks.push_back(std::make_unique<ProgressBarCallback>(*outputs->terminal, plan.device.is_cpu()));
  callbacks.push_back(std::make_unique<ConsoleLog>(log));
  if (outputs && !outputs->metrics_csv.empty())
    callbacks.push_back(std::make_unique<MetricsCsv>(outputs->metrics_csv, training, evaluation, has_val));
  if (outputs && outputs->loggers && !outputs->loggers->empty())
    callbacks.push_back(std::make_unique<PluginLoggersCallback>(outputs->loggers));
  if (e.early_stopping.patience > 0)
    callbacks.push_back(std::make_unique<EarlyStopping>(monitor(e.early_stopping.monitor, e.early_stopping.mode),
                                                        e.early_stopping.patience, e.early_stopping.min_delta));
  if (outputs && !outputs->checkpoints.empty())
    callbacks.push_back(
        std::make_unique<CheckpointSaver>(outputs->checkpoints, e, monitor(e.checkpoint.monitor, e.checkpoint.mode)));
  else if (plan.shard && plan.rank != 0 && e.checkpoint.save != CheckpointSave::none)
    // fsdp gathers each checkpoint from every rank's shards: the others take part, writing nothing.
    callbacks.push_back(std::make_unique<CheckpointSaver>(std::filesystem::path(), e,
                                                          monitor(e.checkpoint.monitor, e.checkpoint.mode)));
  if (outputs && e.train.profile)
    callbacks.push_back(std::make_unique<ProfilerCallback>(outputs->run_folder / "profile", e.train.profile_warmup,
                                                           e.train.profile_steps, plan.capabilities.profiler_activity, log));
  return callbacks;
}

std::chrono::milliseconds collective_timeout(const Experiment& e) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(e.distributed.timeout * 1000));
}

}  // namespace

std::unique_ptr<Collectives> connect_ranks(const RunPlan& plan, const Experiment& e) {
  if (!plan.world) return nullptr;
  auto collectives = std::make_unique<Collectives>(*plan.world, collective_timeout(e), plan.device.type(),
                                                   e.distributed.interface.value_or(""));
  // Nodes that read different experiment files (or --set) would train different models: refused
  // at the rendezvous. The interface may differ from node to node.
  Experiment same = e;
  same.distributed.interface.reset();
  std::ostringstream fingerprint;
  fingerprint << std::hex << fnv1a_64(resolved_toml(same));
  collectives->require_same("experiment", "fnv1a " + fingerprint.str());
  return collectives;
}

namespace {

// The process's threads and host heap for this run, and ddp's carrier in the log.
void set_up_process(const RunPlan& plan, const Experiment& e, Collectives* collectives, BuiltRun& built,
                    std::ostream& log) {
  if (plan.threads > 0) at::set_num_threads(plan.threads);
  if (plan.keep_host_memory)
    if (const std::string heap = built.process_settings.keep_freed_host_memory(); !heap.empty())
      log << "device: " << heap << "\n";
  if (!collectives) return;
  const World& world = collectives->world();
  const RendezvousNetwork& network = collectives->network();
  const std::string carrier =
      attach_device_collective(*collectives, *plan.choice.backend, plan.devices.collective, plan.device, log);
  log << "ddp: " << world.world_size << " processes (" << world.source << ", rendezvous " << network.address << ":"
      << world.master_port << (network.address_source == "MASTER_ADDR" ? "" : ", " + network.address_source) << " over "
      << network.interface
      << (!world.agent_store            ? ""
          : world.source == "plugtrain" ? ", store in the launcher"
                                        : ", torchrun's agent store")
      << "), gradients all-reduced through c10d " << carrier << " in " << e.distributed.bucket_mb << " MiB buckets\n";
}

// The data, loaded (with data.label_noise), and said in the log.
void load_run_data(const ValidatedRun& run, const RunOutputs* outputs, BuiltRun& built, std::ostream& log) {
  const Experiment& e = run.experiment;
  data::LoadedData loaded = load_data(run, outputs);
  built.data = std::move(loaded.data);
  if (e.data.label_noise > 0) {
    const std::int64_t changed =
        data::apply_label_noise(built.data.train, e.data.label_noise, static_cast<std::uint64_t>(e.experiment.seed));
    log << "data: label noise " << e.data.label_noise << " replaced " << changed << " training labels\n";
  }
  log_splits(e, loaded, built.data, log);
  for (const std::string& note : loaded.notes) log << "data: " << note << "\n";
  if (const std::string fields = data::fields_text(built.data.train); !fields.empty())
    log << "data: fields " << fields << ", read by the model's forward_batch\n";
}

// The model from its plugin (model.init's weights in it), on the run's device with its settings.
DeviceSettings place_model(const ValidatedRun& run, const RunPlan& plan, const ModelDescription& description,
                           BuiltRun& built, std::ostream& log) {
  const Experiment& e = run.experiment;
  built.model = build_model(*run.model, description, e);
  if (!e.model.init.empty()) {
    load_python_state_dict(e.model.init, *built.model);
    log << "model: initialised from " << e.model.init << "\n";
  }
  if (plan.shard) {
    // fsdp: the parameters stay on the host until the strategy shards them, one unit at a time:
    // each rank's shard reaches the device, and a unit only while gathered. So a model larger
    // than one device is built (as FSDP2 builds one on the meta device or the CPU).
    at::NoGradGuard no_grad;
    for (at::Tensor& buffer : built.model->buffers()) buffer.set_data(buffer.to(plan.device));
  } else {
    built.model->to(plan.device);
  }
  const DeviceSettings settings = apply_device_settings(e, !plan.capabilities.host_cpu, *built.model);
  if (!settings.line.empty()) log << "device: " << settings.line << "\n";
  for (const auto& p : built.model->parameters()) built.parameters += p.numel();
  return settings;
}

// The device as the loop sees it: where batches go, its memory, and its count of host waits.
DeviceContext device_context(const RunPlan& plan, const DeviceSettings& settings) {
  BackendHandle& backend = *plan.choice.backend;
  const int memory_device = plan.devices.devices.at(0);
  DeviceContext device{plan.device,
                       plan.loader,
                       settings.memory_format,
                       plan.capabilities.float64,
                       [&backend, memory_device] { return backend.memory(memory_device); },
                       [&backend, memory_device] { backend.release_cached_memory(memory_device); }};
  if (backend.counts_host_waits()) {
    device.host_waits = [&backend] { return backend.runtime_counts(false).host_syncs.value_or(0); };
    device.host_waits_by_cause = [&backend] { return backend.runtime_counts(true).host_syncs_by_cause; };
  }
  return device;
}

}  // namespace

std::unique_ptr<BuiltRun> build_run(const ValidatedRun& run, const RunPlan& plan, Collectives* collectives,
                                    const RunOutputs* outputs, std::ostream& log) {
  const Experiment& e = run.experiment;
  auto built = std::make_unique<BuiltRun>();  // from here on, process settings are put back with it
  set_up_process(plan, e, collectives, *built, log);
  at::manual_seed(static_cast<std::uint64_t>(e.experiment.seed));
  const TaskDefinition& task_spec = run.task ? *run.task : *find_task("classification");
  load_run_data(run, outputs, *built, log);
  const std::shared_ptr<Task> task = build_task(task_spec, run, built->data.train, log);
  const ModelDescription description = model_description(built->data.train, task->model_outputs());
  const DeviceSettings device_settings = place_model(run, plan, description, *built, log);

  TrainerParts parts;
  parts.loop = loop_config(e);
  parts.loop.pause_after_epoch = run.stop_after_epoch;
  parts.batch_size = plan.batch.loader;
  parts.lr = plan.batch.lr;
  parts.model = built->model;
  parts.task = task;
  parts.strategy = make_strategy(run, plan, description, device_settings.memory_format, collectives, built->model, log);
  const SteppedParameters stepped = parts.strategy->stepped_parameters(built->model->parameters());
  const std::vector<at::Tensor>& parameters = stepped.tensors;
  parts.optimizer = make_optimizer(e, plan.batch.lr, parameters, stepped.matrices);
  log << "model: " << e.model.name << " (" << run.model->plugin << "), " << built->parameters << " parameters; optimizer "
      << word_of(e.optim.name) << " (" << to_string(resolve_optimizer_impl(e.optim.name, e.optim.impl, parameters))
      << ") lr " << e.optim.lr << ", schedule " << word_of(e.schedule.name) << ", precision "
      << word_of(e.train.precision) << "\n";
  parts.precision = std::make_unique<Precision>(e.train.precision, plan.device);
  parts.data = &built->data;
  parts.device = device_context(plan, device_settings);
  place_data(e, plan, built->data, parts.device, log);
  use_graphs(plan, parts, log);
  parts.callbacks = make_callbacks(e, plan, *task, built->data.has_val(), outputs, log);
  parts.resume_from = run.resume_from;
  parts.finished_checkpoint_is_done = run.finished_checkpoint_is_done;
  parts.experiment_record = plan.record;
  built->trainer = std::make_unique<Trainer>(std::move(parts));
  return built;
}

}  // namespace plugtrain
