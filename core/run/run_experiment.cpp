#include "run/run_experiment.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <cmath>
#include <fstream>
#include <ostream>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "config/config_error.h"
#include "config/experiment_loader.h"
#include <toml++/toml.h>
#include "config/suggest.h"
#include "config/toml_text.h"
#include "data/dataset.h"
#include "distributed/collectives.h"
#include "distributed/data_parallel.h"
#include "distributed/device_collective.h"
#include "distributed/launcher.h"
#include "distributed/world.h"
#include "plugins/plugin_error.h"
#include "plugins/plugin_host.h"
#include "select/backend_selection.h"
#include "config/experiment_schema.h"
#include "state/checkpoint.h"
#include "util/atomic_file.h"
#include "util/interrupt.h"
#include "util/tee_stream.h"
#include "logging/progress_bar.h"
#include <iostream>
#include "version.h"

namespace plugtrain {

namespace {

namespace fs = std::filesystem;

// The experiment as it will run, every key with its value (defaults included), as TOML.
std::string resolved_toml(const Experiment& e) {
  std::string out = "# resolved by plugtrain " PLUGTRAIN_VERSION " from " + e.source + "\n";
  std::string table;
  for (const ConfigKey& k : experiment_schema()) {
    const std::string t = k.path.substr(0, k.path.find('.'));
    if (t != table) {
      out += "\n[" + t + "]\n";
      table = t;
      if (t == "model")
        for (const auto& [name, value] : e.model_options.values()) out += name + " = " + toml_text(value) + "\n";
    }
    out += k.path.substr(t.size() + 1) + " = " + k.default_text(e) + "\n";
  }
  return out;
}

int version_number(const fs::path& p) {
  static const std::regex pattern("version_([0-9]+)");
  std::smatch m;
  const std::string name = p.filename().string();
  return std::regex_match(name, m, pattern) ? std::stoi(m[1]) : -1;
}

// runs/<name>/version_N, the next free N (Lightning's layout).
fs::path new_run_folder(const Experiment& e) {
  const fs::path base = fs::path(e.output) / e.name;
  int next = 0;
  if (fs::is_directory(base))
    for (const auto& entry : fs::directory_iterator(base)) next = std::max(next, version_number(entry.path()) + 1);
  return base / ("version_" + std::to_string(next));
}

fs::path checkpoint_folder(const Experiment& e, const fs::path& run_folder) {
  return e.checkpoint_folder.empty() ? run_folder / "checkpoints" : fs::path(e.checkpoint_folder);
}

// "--resume last": the newest last.ckpt of this experiment; else the path given.
fs::path resume_checkpoint(const Experiment& e, const std::string& resume) {
  if (resume != "last") return resume;
  if (!e.checkpoint_folder.empty()) return fs::path(e.checkpoint_folder) / "last.ckpt";
  const fs::path base = fs::path(e.output) / e.name;
  fs::path newest;
  int newest_version = -1;
  if (fs::is_directory(base))
    for (const auto& entry : fs::directory_iterator(base)) {
      const int v = version_number(entry.path());
      if (v > newest_version && fs::exists(entry.path() / "checkpoints" / "last.ckpt")) {
        newest_version = v;
        newest = entry.path() / "checkpoints" / "last.ckpt";
      }
    }
  if (newest.empty())
    throw CheckpointError("--resume last: no " + (base / "version_*" / "checkpoints" / "last.ckpt").string() +
                          " found (has this experiment run with checkpoints?)");
  return newest;
}

// Keys that may differ between a run and its resumption: how long, where, how verbose, on
// what hardware. Anything else (seed, data, batch, optimizer, model...) would make the resumed
// run a different run, so it is refused.
bool may_change_on_resume(const std::string& key) {
  static const std::set<std::string> keys = {
      "train.epochs",     "train.log_interval", "train.eval_every",  "train.threads",    "experiment.output",
      "plugins.paths",    "backend.name",       "backend.prefer",    "backend.disable",  "backend.force_mps",
      "backend.devices",  "data.path",          "data.test_batch_size", "data.test_subset",
      "backend.strategy", "distributed.timeout", "distributed.bucket_mb"};
  return keys.count(key) || key.rfind("checkpoint.", 0) == 0 || key.rfind("early_stopping.", 0) == 0;
}

std::string node_text(const toml::node& node) {
  std::ostringstream out;
  node.visit([&](const auto& v) { out << v; });
  return out.str();
}

void check_resume_compatible(const std::string& saved, const std::string& current, const fs::path& checkpoint) {
  toml::table before = toml::parse(saved);
  const toml::table now = toml::parse(current);
  // Checkpoints from before ddp ran one process: their global batch was the batch size.
  if (!before.at_path("data.global_batch_size") && before.at_path("data.batch_size").is_integer())
    if (auto* data = before["data"].as_table())
      data->insert("global_batch_size", *before.at_path("data.batch_size").value<std::int64_t>());
  std::string differences;
  for (auto&& [table_name, table] : before) {
    if (!table.is_table()) continue;
    for (auto&& [key, value] : *table.as_table()) {
      const std::string path = std::string(table_name.str()) + "." + std::string(key.str());
      if (may_change_on_resume(path)) continue;
      const std::string was = node_text(value);
      const toml::node* n = now.at_path(path).node();
      const std::string is = n ? node_text(*n) : "unset";
      if (was != is) differences += (differences.empty() ? "" : ", ") + path + " " + was + " -> " + is;
    }
  }
  if (!differences.empty())
    throw CheckpointError(checkpoint.string() + ": this experiment differs from the one that wrote the checkpoint (" +
                          differences + "); resuming would not continue that run");
}

const RegisteredModel& find_model(const PluginHost& host, const ExperimentFile& file, const Experiment& e) {
  if (const RegisteredModel* m = host.models().find(e.model)) return *m;
  std::vector<std::string> names;
  for (const auto& m : host.models().all()) names.push_back(m.spec.name);
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  throw ConfigError(key_location(file, "model.name") + ": unknown model '" + e.model + "'" + did_you_mean(e.model, names) +
                    "; available: " + (list.empty() ? "none (no models plugin loaded, see `plugtrain plugins`)" : list));
}

void check_data_path(const ExperimentFile& file, const Experiment& e) {
  if (e.dataset == "synthetic") return;
  if (!std::filesystem::is_directory(e.data_path))
    throw ConfigError(key_location(file, "data.path") + ": data.path '" + e.data_path +
                      "' does not exist or is not a folder" +
                      (e.data_path == "/usr/share/datasets/fashion-mnist"
                           ? " (install the Debian package dataset-fashion-mnist)"
                           : ""));
}

data::DatasetPair load_data(const Experiment& e) {
  data::DatasetPair d = e.dataset == "synthetic"
                            ? data::make_synthetic(e.synthetic_shape, e.synthetic_classes, e.synthetic_train_size,
                                                   e.synthetic_test_size, static_cast<std::uint64_t>(e.seed))
                            : data::load_idx_dataset(e.data_path);
  d.train = data::subset(d.train, e.train_subset);
  d.test = data::subset(d.test, e.test_subset);
  return d;
}

// How many processes there will be and how each is fed: the global batch split over the
// ranks, and the learning rate scaled for it when the experiment asks.
struct BatchPlan {
  std::int64_t per_device = 0, global = 0;
  double lr_factor = 1;
};

BatchPlan batch_plan(const ExperimentFile& file, const Experiment& e, std::int64_t devices) {
  BatchPlan b;
  b.global = e.global_batch_size > 0 ? e.global_batch_size : e.batch_size * devices;
  if (b.global % devices != 0)
    throw ConfigError(key_location(file, "data.global_batch_size") + ": data.global_batch_size " +
                      std::to_string(b.global) + " does not split evenly over " + std::to_string(devices) +
                      " devices");
  b.per_device = b.global / devices;
  const double k = double(b.global) / double(e.batch_size);
  b.lr_factor = e.lr_scaling == "linear" ? k : e.lr_scaling == "sqrt" ? std::sqrt(k) : 1.0;
  return b;
}

std::vector<int> first_devices(std::int64_t n) {
  std::vector<int> v;
  for (int i = 0; i < n; ++i) v.push_back(i);
  return v;
}

// The plan for this process: how many devices (processes) and which strategy.
MultiDevicePlan plan_devices(BackendHandle& backend, const Experiment& e, const std::optional<World>& world) {
  const Strategy asked = e.strategy == "dp" ? Strategy::dp : e.strategy == "single" ? Strategy::single : Strategy::ddp;
  if (world) {
    // Under a launcher: one device per process, the one of this local rank.
    if (e.strategy == "single" || e.strategy == "dp")
      throw DistributedError("backend.strategy = \"" + e.strategy + "\" but " + world->source + " started " +
                             std::to_string(world->world_size) + (world->world_size == 1 ? " process" : " processes") +
                             "; use \"ddp\" or \"auto\"");
    MultiDevicePlan plan = backend.plan_multi_device({{world->local_rank}, Strategy::ddp});
    if (plan.strategy != Strategy::ddp && world->world_size > 1)
      throw DistributedError("backend '" + backend.name() + "' cannot train one process per device (ddp)" +
                             (plan.warnings.empty() ? std::string() : ": " + plan.warnings.front()));
    // One device per rank: a launcher that starts more ranks on a node than it has devices
    // would put two on one GPU, which NCCL refuses (as torch.distributed does).
    if (plan.devices != std::vector<int>{world->local_rank})
      throw DistributedError("LOCAL_RANK " + std::to_string(world->local_rank) + " has no device of its own: backend '" +
                             backend.name() + "' has " + std::to_string(backend.probe().devices.size()) +
                             "; start at most that many processes per node");
    return plan;
  }
  std::int64_t n = e.devices;
  if (n == 0) {  // "auto": every device the backend has (the CPU counts as one)
    const ProbeResult& probe = backend.probe();
    n = backend.device_type() == "cpu" ? 1 : std::max<std::int64_t>(1, std::int64_t(probe.devices.size()));
  }
  MultiDevicePlan plan = backend.plan_multi_device({first_devices(n), n > 1 || e.strategy != "auto" ? asked : Strategy::single});
  if (plan.devices.empty()) plan.devices = {0};
  return plan;
}

c10::Device device_of(const std::string& type, int index) {
  return type == "cpu" ? c10::Device(c10::kCPU) : c10::Device(type + ":" + std::to_string(index));
}

std::shared_ptr<Model> build_model(const RegisteredModel& entry, const ModelInputs& inputs, const Experiment& e) {
  std::shared_ptr<Model> model =
      call_plugin(entry.plugin, "building model", [&] { return entry.spec.factory(inputs, e.model_options); });
  if (!model) throw PluginError(entry.plugin, "model factory for '" + e.model + "' returned nothing");
  return model;
}

// dp: `model` becomes replica 0; the factory builds the others, one per further device.
std::unique_ptr<DataParallel> make_replicas(const RegisteredModel& entry, const ModelInputs& inputs, const Experiment& e,
                                            std::shared_ptr<Model> model, const std::string& type,
                                            const std::vector<int>& indices, std::ostream& log) {
  std::vector<std::shared_ptr<Model>> replicas{std::move(model)};
  std::vector<c10::Device> devices{device_of(type, indices.at(0))};
  std::string names = devices[0].str();
  for (std::size_t i = 1; i < indices.size(); ++i) {
    devices.push_back(device_of(type, indices[i]));
    std::shared_ptr<Model> replica = build_model(entry, inputs, e);
    replica->to(devices.back());
    replicas.push_back(std::move(replica));
    names += ", " + devices.back().str();
  }
  log << "dp: " << replicas.size() << " replicas in this process on " << names << "; gradients summed on "
      << devices[0].str() << "\n";
  return std::make_unique<DataParallel>(std::move(replicas), std::move(devices));
}

std::chrono::milliseconds collective_timeout(const Experiment& e) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(e.distributed_timeout * 1000));
}

// devices = N without a launcher around us: this process only starts N workers (copies of
// this command) and waits for them; its exit code is theirs.
RunResult launch_workers(const RunRequest& request, const Experiment& e, const MultiDevicePlan& plan,
                         std::int64_t ranks, std::ostream& console) {
  for (const auto& w : plan.warnings) console << "warning: " << w << "\n";
  if (request.command_line.empty()) throw DistributedError("cannot start worker processes: no command line given");
  LaunchRequest launch;
  launch.command = request.command_line;
  launch.workers = int(ranks);
  // The workers notice a failed rank within the collective timeout; this is the backstop.
  launch.grace = collective_timeout(e) + std::chrono::milliseconds(5000);
  RunResult launched;
  launched.launched_workers = true;
  launched.world_size = int(ranks);
  launched.workers_exit_code = launch_local_workers(launch, console);
  return launched;
}

// A failure that comes from the other ranks (so this rank names them) rather than from this
// rank's own work (which it then announces). Collectives inside backward (the Reducer's) fail
// with c10d's or Gloo's own errors.
bool is_collective_failure(const std::exception& error) {
  if (dynamic_cast<const PluginError*>(&error)) return false;  // e.g. this rank could not make NCCL
  if (dynamic_cast<const CollectiveError*>(&error) || dynamic_cast<const c10::DistError*>(&error)) return true;
  const std::string what = error.what();
  return what.find("gloo") != std::string::npos || what.find("Connection") != std::string::npos ||
         what.find("NCCL") != std::string::npos;
}

nlohmann::json memory_json(const MemoryInfo& m) {
  auto bytes = [](const std::optional<std::uint64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return {{"total_bytes", bytes(m.total_bytes)},           {"free_bytes", bytes(m.free_bytes)},
          {"used_bytes", bytes(m.process_used_bytes)},     {"peak_bytes", bytes(m.process_peak_bytes)},
          {"reserved_bytes", bytes(m.reserved_bytes)},     {"oom_events", bytes(m.oom_events)},
          {"note", m.note}};
}

nlohmann::json summary_json(const Experiment& e, const RunResult& r, std::int64_t parameters) {
  nlohmann::json epochs = nlohmann::json::array();
  for (const auto& m : r.summary.epochs) {
    nlohmann::json row = {{"epoch", m.epoch},
                          {"train_loss", m.train_loss},
                          {"train_accuracy", m.train_accuracy},
                          {"samples_per_second", m.samples_per_second},
                          {"seconds", m.seconds},
                          {"lr", m.lr}};
    row["test_loss"] = m.test_loss ? nlohmann::json(*m.test_loss) : nlohmann::json(nullptr);
    row["test_accuracy"] = m.test_accuracy ? nlohmann::json(*m.test_accuracy) : nlohmann::json(nullptr);
    row["memory"] = memory_json(m.memory);
    epochs.push_back(row);
  }
  return {{"experiment", e.name},
          {"source", e.source},
          {"model", e.model},
          {"parameters", parameters},
          {"dataset", e.dataset},
          {"backend", r.backend},
          {"device", r.device},
          {"seed", e.seed},
          {"steps", r.summary.steps},
          {"interrupted", r.summary.interrupted},
          {"stopped_early", r.summary.stopped_early},
          {"precision", e.precision},
          {"skipped_steps", r.summary.skipped_steps},
          {"best_test_accuracy", r.summary.best_test_accuracy},
          {"best_epoch", r.summary.best_epoch},
          {"final_test_accuracy", r.summary.final_test_accuracy},
          {"final_test_loss", r.summary.final_test_loss},
          {"total_seconds", r.summary.total_seconds},
          {"samples_per_second", r.summary.samples_per_second},
          {"plugtrain", PLUGTRAIN_VERSION},
          {"world_size", r.world_size},
          {"epochs", epochs}};
}

}  // namespace

RunResult run_experiment(const RunRequest& request, std::ostream& console) {
  // 1. Everything about the experiment is checked before any work starts.
  ExperimentFile file = parse_experiment_file(request.experiment_file);
  for (const auto& o : request.overrides) apply_override(file, o);
  Experiment e = resolve_experiment(file);
  if (request.no_cuda) e.disable.insert(e.disable.end(), {"cuda", "mps"});  // --no-cuda: no GPU at all
  if (request.no_mps) e.disable.push_back("mps");

  SearchOptions search;
  search.cli_paths = request.plugin_paths;
  for (const auto& p : e.plugin_paths) search.experiment_paths.emplace_back(p);
  PluginHost host(search);
  const RegisteredModel& model_entry = find_model(host, file, e);
  e.model_options = resolve_model_options(file, model_entry.spec);
  check_data_path(file, e);
  if (!e.model_init.empty() && !fs::is_regular_file(e.model_init))
    throw ConfigError(key_location(file, "model.init") + ": model.init '" + e.model_init + "' does not exist");
  fs::path resume_from;
  std::string resume_experiment;  // the resolved experiment stored in the checkpoint
  if (!request.resume.empty()) {
    resume_from = resume_checkpoint(e, request.resume);
    const CheckpointContent info = read_checkpoint_info(resume_from);
    if (info.model_name != e.model)
      throw CheckpointError(resume_from.string() + ": written for model '" + info.model_name + "', this experiment trains '" +
                            e.model + "'");
    resume_experiment = info.experiment_json;
  }

  // 2. The device(s), and why. With devices = N and no launcher around us, this process only
  //    starts N workers (launch_workers).
  const std::optional<World> world = world_from_environment();
  BackendChoice choice = select_backend(host, e);
  BackendHandle& backend = *choice.backend;
  const MultiDevicePlan plan = plan_devices(backend, e, world);
  const bool ddp = world.has_value() || (plan.strategy == Strategy::ddp && plan.devices.size() > 1);
  const bool dp = !world && plan.strategy == Strategy::dp && plan.devices.size() > 1;
  const std::int64_t ranks = world ? world->world_size : ddp ? std::int64_t(plan.devices.size()) : 1;
  const std::int64_t devices_used = dp ? std::int64_t(plan.devices.size()) : ranks;
  const BatchPlan batch = batch_plan(file, e, devices_used);
  // The run's record holds the global batch it really used: a resume with another number of
  // processes is the same run only when the global batch stays the same.
  e.global_batch_size = batch.global;
  if (!resume_from.empty()) check_resume_compatible(resume_experiment, resolved_toml(e), resume_from);
  if (ddp && !world) return launch_workers(request, e, plan, ranks, console);
  const int rank = world ? world->rank : 0;
  const bool writes = rank == 0;  // only rank 0 prints, writes checkpoints, metrics and the summary

  // The run's folder: a resumed run continues the folder its checkpoint lives in.
  const fs::path run_folder = !resume_from.empty() && resume_from.parent_path().filename() == "checkpoints"
                                  ? resume_from.parent_path().parent_path()
                                  : new_run_folder(e);
  const std::string resolved = resolved_toml(e);
  std::ofstream log_file;
  if (writes) {
    fs::create_directories(run_folder);
    write_file_atomically(run_folder / "experiment.toml", resolved);
    log_file.open(run_folder / "train.log", std::ios::app);
  }
  TeeBuffer tee(writes ? console.rdbuf() : nullptr, log_file ? log_file.rdbuf() : nullptr);
  std::ostream log(&tee);
  log << "run folder: " << run_folder.string() << "\n";
  for (const auto& line : choice.reasons) log << "backend: " << line << "\n";
  for (const auto& w : plan.warnings) log << "warning: " << w << "\n";
  const std::string type = backend.device_type();
  const c10::Device device = device_of(type, plan.devices.at(0));
  const LoaderConfig loader = backend.loader_config(plan.devices);
  if (e.threads > 0)
    at::set_num_threads(int(e.threads));
  else if (world && world->local_world_size > 1)  // the ranks on this machine share its cores
    at::set_num_threads(std::max(1, at::get_num_threads() / world->local_world_size));
  log << "device: " << device.str() << " (intra-op threads " << at::get_num_threads() << "); loader: workers "
      << loader.workers << ", pin_memory " << (loader.pin_memory ? "on" : "off") << ", non_blocking "
      << (loader.non_blocking ? "on" : "off") << ", prefetch " << loader.prefetch_depth << "\n";
  std::unique_ptr<Collectives> collectives;
  if (world) {
    collectives = std::make_unique<Collectives>(*world, collective_timeout(e));
  }
  // Per-device batch and learning rate for this run (the experiment file keeps the user's values).
  Experiment train = e;
  train.batch_size = dp ? batch.global : batch.per_device;  // dp: one loader feeds every replica
  train.lr = e.lr * batch.lr_factor;
  if (devices_used > 1 || batch.per_device != e.batch_size) {
    log << "batch: " << batch.per_device << " per device x " << devices_used << " = " << batch.global << " per step";
    if (batch.lr_factor != 1.0)
      log << "; lr " << e.lr << " x " << batch.lr_factor << " (" << e.lr_scaling << " scaling) = " << train.lr;
    log << "\n";
  }

  // 3. The device's collective, data and model, seeded. In a ddp run, from here on a failure
  //    of this rank is told to the others through the store, so they can name it.
  RunResult result;
  RunFiles files;
  std::int64_t parameters = 0;
  try {
    if (collectives) {
      const std::string carrier = attach_device_collective(*collectives, backend, plan.collective, device, log);
      log << "ddp: " << world->world_size << " processes (" << world->source << ", rendezvous " << world->master_addr
          << ":" << world->master_port
          << (!world->agent_store ? "" : world->source == "plugtrain" ? ", store in the launcher" : ", torchrun's agent store")
          << "), gradients all-reduced through c10d " << (carrier == "gloo" ? "Gloo" : carrier == "nccl" ? "NCCL" : carrier)
          << " in " << e.bucket_mb << " MiB buckets\n";
    }
    at::manual_seed(static_cast<std::uint64_t>(e.seed));
    data::DatasetPair data = load_data(e);
    if (e.label_noise > 0) {
      const std::int64_t changed = data::apply_label_noise(data.train, e.label_noise, static_cast<std::uint64_t>(e.seed));
      log << "data: label noise " << e.label_noise << " replaced " << changed << " training labels\n";
    }
    log << "data: " << e.dataset << ", " << data.train.labels.size(0) << " training and " << data.test.labels.size(0)
        << " test samples, " << data.train.num_classes << " classes"
        << (e.dataset == "synthetic" ? "" : " from " + e.data_path) << "\n";
    ModelInputs inputs{data.train.sample_shape, data.train.num_classes};
    std::shared_ptr<Model> model = build_model(model_entry, inputs, e);
    if (!e.model_init.empty()) {
      load_python_state_dict(e.model_init, *model);
      log << "model: initialised from " << e.model_init << "\n";
    }
    model->to(device);
    std::unique_ptr<DataParallel> replicas;
    if (dp) replicas = make_replicas(model_entry, inputs, e, model, backend.device_type(), plan.devices, log);
    for (const auto& p : model->parameters()) parameters += p.numel();
    log << "model: " << e.model << " (" << model_entry.plugin << "), " << parameters << " parameters; optimizer "
        << e.optimizer << " lr " << e.lr << ", schedule " << e.schedule << ", precision " << e.precision << "\n";

    // 4. Train; SIGINT/SIGTERM stop after the current step with a checkpoint.
    result.world_size = int(ranks);
    result.backend = backend.name();
    result.device = device.str();
    result.run_folder = run_folder;
    if (writes) {
      if (e.checkpoint_save != "none") files.checkpoints = checkpoint_folder(e, run_folder);
      files.metrics_csv = run_folder / "metrics.csv";
      files.tensorboard = run_folder / "tensorboard";
      if (&console == &std::cout && ProgressBar::wanted()) files.progress = &std::cout;
    }
    files.experiment_json = resolved;
    files.resume_from = resume_from;
    const int memory_device = plan.devices.at(0);
    {
      InterruptScope interrupts;
      result.summary = Trainer(train, model, data, device, loader, log, [&] { return backend.memory(memory_device); },
                               files, collectives.get(), replicas.get())
                           .fit();
    }
  } catch (const std::exception& error) {
    if (!collectives) throw;
    // Name the rank at fault: the one whose collective broke tells the others what it saw.
    if (is_collective_failure(error)) throw DistributedError(collectives->explain_failure("training", error));
    collectives->announce_failure(error.what());
    throw DistributedError("rank " + std::to_string(rank) + ": " + error.what());
  }
  if (!writes) return result;

  // 5. Summary, printed and written whole.
  result.summary_file = run_folder / "summary.json";
  write_file_atomically(result.summary_file, summary_json(e, result, parameters).dump(2) + "\n");
  if (result.summary.interrupted) {
    log << "interrupted (" << result.summary.stop_reason << ")"
        << (files.checkpoints.empty() ? std::string(": no checkpoint written (checkpoint.save = \"none\")")
                                      : ": checkpoint " + (files.checkpoints / "last.ckpt").string() +
                                            "\nresume with: plugtrain run " + e.source + " --resume last")
        << "\n";
    return result;
  }
  if (result.summary.stopped_early) log << result.summary.stop_reason << "\n";
  char line[256];
  std::snprintf(line, sizeof line,
                "done: final test accuracy %.4f (best %.4f at epoch %lld), %.1f s, %.0f samples/s on %s\n",
                result.summary.final_test_accuracy, result.summary.best_test_accuracy,
                static_cast<long long>(result.summary.best_epoch), result.summary.total_seconds,
                result.summary.samples_per_second, result.device.c_str());
  log << line << "summary: " << result.summary_file.string() << "\n";
  return result;
}

}  // namespace plugtrain
