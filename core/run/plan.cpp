#include "run/plan.h"

#include <algorithm>
#include <cmath>
#include <thread>
#include <ostream>

#include <ATen/Parallel.h>

#include "checkpoint/checkpoint_error.h"
#include "config/config_error.h"
#include "config/optimizer_table.h"
#include "config/resolved_experiment.h"
#include "optim/optimizers.h"
#include "run/batch_search.h"
#include "run/device_decisions.h"
#include "run/fastest_backend.h"
#include "train/graph_step.h"

namespace plugtrain {

namespace {

// per_device: data.batch_size, or what "auto" chose.
BatchPlan batch_plan(const ExperimentFile& file, const Experiment& e, std::int64_t per_device, std::int64_t devices,
                     bool one_loader) {
  BatchPlan b;
  b.global = e.data.global_batch_size > 0 ? e.data.global_batch_size : per_device * devices;
  if (b.global % devices != 0)
    throw ConfigError(key_location(file, "data.global_batch_size") + ": data.global_batch_size " +
                      std::to_string(b.global) + " does not split evenly over " + std::to_string(devices) +
                      " devices");
  b.per_device = b.global / devices;
  b.loader = one_loader ? b.global : b.per_device;
  const std::int64_t reference = e.optim.lr_batch_size > 0 ? e.optim.lr_batch_size : per_device;
  // Accumulation: an optimizer step sees accumulate_steps global batches.
  const double effective = double(b.global * e.train.accumulate_steps);
  b.lr_factor = lr_scaling_factor(e.optim.lr_scaling, effective / double(reference));
  b.lr = e.optim.lr * b.lr_factor;
  return b;
}

std::vector<int> first_devices(std::int64_t n) {
  std::vector<int> v;
  for (int i = 0; i < n; ++i) v.push_back(i);
  return v;
}

// How the backend serves the devices asked for.
// backend.devices within what the backend has: on the host CPU (whose "devices" are processes
// sharing its cores) two per core, elsewhere the devices its probe lists.
void check_device_count(const ValidatedRun& run, BackendHandle& backend) {
  const std::int64_t asked = run.experiment.backend.devices.value_or(0);
  if (asked <= 1) return;
  const bool host_cpu = backend.capabilities().host_cpu;
  const std::int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  const std::int64_t limit = host_cpu ? 2 * cores : std::int64_t(backend.probe().devices.size());
  if (asked <= limit) return;
  // Chosen automatically, the backend is the machine's best: on a one-GPU machine the same file
  // that runs two CPU processes elsewhere meets this, so the line says how to get that run.
  const std::string chosen = run.experiment.backend.name || host_cpu
                                 ? std::string()
                                 : " (chosen automatically; backend.name = \"cpu\" runs " + std::to_string(asked) +
                                       " processes on the CPU)";
  throw ConfigError(key_location(run.file, "backend.devices") + ": backend.devices = " + std::to_string(asked) + " but " +
                    backend.name() + (host_cpu ? " runs at most " + std::to_string(limit) + " processes here (2 per core of " +
                                                     std::to_string(cores) + ")"
                                               : " has " + std::to_string(limit) + " device" + (limit == 1 ? "" : "s")) +
                    chosen);
}

// dp replicates one process's batches, so it cannot split a data set's named fields. Asked
// before the devices are counted: the same file is refused on every machine, not only on one
// with enough devices for dp.
void check_dp_reads_the_data_set(const ValidatedRun& run) {
  const Experiment& e = run.experiment;
  if (e.backend.strategy != RunStrategy::dp || e.backend.devices.value_or(2) <= 1) return;
  if (!run.dataset || !run.dataset->has_fields()) return;
  throw ConfigError(key_location(run.file, "backend.strategy") + ": strategy dp splits only the input over its replicas; "
                    "data set '" + run.dataset->spec.name + "' gives named fields: use ddp");
}

// train.precision bf16 or fp16 only where the backend has autocast kernels for it: elsewhere
// autocast would quietly compute in fp32.
void check_precision(const ValidatedRun& run, BackendHandle& backend) {
  const PrecisionMode precision = run.experiment.train.precision;
  if (precision == PrecisionMode::fp32) return;
  const std::vector<std::string> supported = backend.autocast_precisions();
  const std::string word = word_of(precision);
  if (std::find(supported.begin(), supported.end(), word) != supported.end()) return;
  std::string listed;
  for (const std::string& p : supported) listed += (listed.empty() ? "" : ", ") + p;
  throw ConfigError(key_location(run.file, "train.precision") + ": train.precision = \"" + word + "\" but backend '" +
                    backend.name() + "' (" + backend.capabilities().device_type + ") has no " + word +
                    " autocast kernels (it has: " + (listed.empty() ? "none" : listed) + "); use \"fp32\"");
}

MultiDevicePlan plan_devices(BackendHandle& backend, const Experiment& e, const std::optional<World>& world) {
  if (world) {
    // Under a launcher: one device per process, the one of this local rank.
    if (e.backend.strategy == RunStrategy::single || e.backend.strategy == RunStrategy::dp)
      throw DistributedError(std::string("backend.strategy = \"") + word_of(*e.backend.strategy) + "\" but " +
                             world->source + " started " + std::to_string(world->world_size) +
                             (world->world_size == 1 ? " process" : " processes") +
                             "; use \"ddp\", \"fsdp\" or \"auto\"");
    MultiDevicePlan plan = backend.plan_multi_device({{world->local_rank}, Strategy::ddp});
    if (plan.strategy != Strategy::ddp && world->world_size > 1)
      throw DistributedError("backend '" + backend.name() + "' cannot train one process per device (ddp)" +
                             (plan.warnings.empty() ? std::string() : ": " + plan.warnings.front()));
    // One device per rank: a launcher that starts more ranks on a node than it has devices
    // would put two on one device, which device collectives refuse (as torch.distributed does).
    if (plan.devices != std::vector<int>{world->local_rank})
      throw DistributedError("LOCAL_RANK " + std::to_string(world->local_rank) + " has no device of its own: backend '" +
                             backend.name() + "' has " + std::to_string(backend.probe().devices.size()) +
                             "; start at most that many processes per node");
    return plan;
  }
  const Strategy asked = process_layout(e.backend.strategy.value_or(RunStrategy::ddp));
  // "auto": every device the backend lists (the host CPU lists one).
  const std::int64_t n = e.backend.devices ? *e.backend.devices : std::max<std::int64_t>(1, std::int64_t(backend.probe().devices.size()));
  MultiDevicePlan plan = backend.plan_multi_device({first_devices(n), n > 1 || e.backend.strategy ? asked : Strategy::single});
  if (plan.devices.empty()) plan.devices = {0};
  return plan;
}

// The backend's loader settings for `devices`; data.workers / data.prefetch, when set, take the
// place of its choice.
LoaderConfig loader_config(const Experiment& e, BackendHandle& backend, const std::vector<int>& devices) {
  LoaderConfig loader = backend.loader_config(devices);
  if (e.data.workers) loader.workers = int(*e.data.workers);
  if (e.data.prefetch) loader.prefetch_depth = int(*e.data.prefetch);
  return loader;
}

// What a run and a trial decide alike once their devices are known: the loader, the data's
// residency, the host heap and the host reads every step makes.
void decide_device_use(const ValidatedRun& run, RunPlan& p, BackendHandle& backend) {
  const Experiment& e = run.experiment;
  p.loader = loader_config(e, backend, p.devices.devices);
  decide_data_residency(run, p, backend);
  p.keep_host_memory = p.capabilities.host_cpu && e.train.keep_host_memory;
  p.step_host_reads = step_host_reads(run);
}

// data.batch_size = "auto": what the checkpoint's run chose when resuming, else a search.
std::int64_t automatic_batch_size(ValidatedRun& run, RunPlan& p) {
  const Experiment& e = run.experiment;
  if (!run.resume_from.empty()) {
    if (auto recorded = recorded_integer(run.resume_record, "data.batch_size"); recorded && *recorded > 0) {
      p.batch_lines.push_back("auto: " + std::to_string(*recorded) + " per device, as the run being resumed chose");
      return *recorded;
    }
  }
  // Under torchrun or Slurm each rank plans alone and could find another size; plugtrain's
  // own launcher (devices = N) searches once and gives every worker the result.
  if (p.world && p.world->world_size > 1)
    throw ConfigError(key_location(run.file, "data.batch_size") + ": data.batch_size = \"auto\" under " +
                      p.world->source + ": every rank must train on the same batch; start the run with "
                      "backend.devices = N instead (the search then runs once), or give a number");
  const BatchSearch search = search_batch_size(run, p);
  p.batch_lines = search.lines;
  return search.chosen;
}

}  // namespace

c10::Device device_of(const std::string& type, int index) {
  const c10::Device base(type);
  // The host CPU is one device, written "cpu" as LibTorch does.
  return base.is_cpu() ? base : c10::Device(base.type(), static_cast<c10::DeviceIndex>(index));
}

RunPlan plan_run(ValidatedRun& run, const SelectionLimits& limits, const std::optional<World>& world) {
  const Experiment& e = run.experiment;
  RunPlan p;
  p.world = world;
  // "fastest" measures the backends (each a short run of its own); under a launcher every
  // rank must agree, so there the priority order decides.
  p.choice = !e.backend.name && e.backend.select == BackendSelect::fastest && !world ? choose_fastest(run, limits)
                                                                  : select_backend(*run.host, e, limits);
  BackendHandle& backend = *p.choice.backend;
  backend.note_started();  // graph recording, the batch search and the run start its device
  p.capabilities = backend.capabilities();
  check_dp_reads_the_data_set(run);
  if (!world) check_device_count(run, backend);
  check_precision(run, backend);
  p.devices = plan_devices(backend, e, world);
  const bool several = p.devices.devices.size() > 1;
  p.strategy = world ? Strategy::ddp : several ? p.devices.strategy : Strategy::single;
  if (e.backend.strategy == RunStrategy::fsdp && p.strategy == Strategy::ddp)
    p.shard = e.distributed.shard.value_or(ShardLevel::full);
  p.launches_workers = !world && p.strategy == Strategy::ddp;
  p.processes = world ? world->world_size : p.launches_workers ? int(p.devices.devices.size()) : 1;
  p.devices_used = p.strategy == Strategy::dp ? std::int64_t(p.devices.devices.size()) : p.processes;
  if (e.train.graphs == true) decide_graph_use(run, p, backend);  // refused before any work
  p.rank = world ? world->rank : 0;
  const std::int64_t per_device = e.data.batch_size ? *e.data.batch_size : automatic_batch_size(run, p);
  p.batch = batch_plan(run.file, e, per_device, p.devices_used, /*one_loader=*/p.strategy == Strategy::dp);
  // The run's record holds the batch it really used: a resume with another number of processes
  // is the same run only when the global batch stays the same, and "auto" is not searched again.
  p.record = resolved_toml(e, {{"data.global_batch_size", std::to_string(p.batch.global)},
                               {"data.batch_size", std::to_string(per_device)}});
  if (!run.resume_from.empty())
    if (const Status same_run = resume_compatible(run.resume_record, p.record); !same_run)
      throw CheckpointError(run.resume_from.string() + ": " + same_run.why_not());
  if (p.launches_workers) return p;  // the workers plan the rest for themselves
  if (e.train.graphs != true) decide_graph_use(run, p, backend);
  p.device = device_of(p.capabilities.device_type, p.devices.devices.at(0));
  decide_device_use(run, p, backend);
  if (e.train.threads > 0)
    p.threads = int(e.train.threads);
  else if (world && world->local_world_size > 1)  // the ranks on this machine share its cores
    p.threads = std::max(1, at::get_num_threads() / world->local_world_size);
  return p;
}

RunPlan trial_plan(const ValidatedRun& run, BackendHandle& backend, int device, std::int64_t batch, bool graphs) {
  const Experiment& e = run.experiment;
  RunPlan p;
  p.choice.backend = &backend;
  backend.note_started();
  p.capabilities = backend.capabilities();
  check_precision(run, backend);
  // Asked as a run's plan asks it: a backend may make its device ready here (the CUDA plugin
  // loads LibTorch's CUDA part on first use).
  p.devices = backend.plan_multi_device({{device}, Strategy::single});
  p.devices.devices = {device};
  p.device = device_of(p.capabilities.device_type, device);
  p.batch.per_device = p.batch.global = p.batch.loader = std::max<std::int64_t>(1, batch);
  p.batch.lr = e.optim.lr;
  if (graphs) decide_graph_use(run, p, backend);
  decide_device_use(run, p, backend);
  p.threads = int(e.train.threads);
  return p;
}

void print_plan(const RunPlan& plan, const Experiment& e, std::ostream& log) {
  for (const auto& line : plan.choice.reasons) log << "backend: " << line << "\n";
  for (const auto& w : plan.devices.warnings) log << "warning: " << w << "\n";
  const LoaderConfig& loader = plan.loader;
  log << "device: " << plan.device.str() << " (intra-op threads "
      << (plan.threads > 0 ? plan.threads : at::get_num_threads()) << "); loader: workers " << loader.workers
      << ", pin_memory " << (loader.pin_memory ? "on" : "off") << ", non_blocking "
      << (loader.non_blocking ? "on" : "off") << ", prefetch " << loader.prefetch_depth << "\n";
  if (!plan.device.is_cpu())  // on the host CPU a read waits for nothing
    for (const auto& why : plan.step_host_reads) log << "device: every step waits for the host: " << why << "\n";
  for (const auto& line : plan.batch_lines) log << "batch: " << line << "\n";
  const BatchPlan& b = plan.batch;
  if (plan.devices_used > 1 || b.per_device != e.data.batch_size.value_or(0)) {
    log << "batch: " << b.per_device << " per device x " << plan.devices_used << " = " << b.global << " per step";
    if (b.lr_factor != 1.0) log << "; lr " << e.optim.lr << " x " << b.lr_factor << " (" << word_of(e.optim.lr_scaling) << " scaling) = " << b.lr;
    log << "\n";
  }
  if (e.train.accumulate_steps > 1)
    log << "batch: " << b.global << " per micro-batch x " << e.train.accumulate_steps
        << " accumulated = effective batch " << b.global * e.train.accumulate_steps << " per optimizer step\n";
}

}  // namespace plugtrain

