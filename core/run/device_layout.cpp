#include "run/device_layout.h"

#include <algorithm>
#include <thread>

#include "config/config_error.h"
#include "run/device_decisions.h"

namespace plugtrain {

namespace {

std::vector<int> first_devices(std::int64_t n) {
  std::vector<int> v;
  for (int i = 0; i < n; ++i) v.push_back(i);
  return v;
}

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
  const std::string chosen =
      run.experiment.backend.name || host_cpu
          ? std::string()
          : " (chosen automatically; backend.name = \"cpu\" runs " + std::to_string(asked) + " processes on the CPU)";
  throw ConfigError(key_location(run.file, "backend.devices") + ": backend.devices = " + std::to_string(asked) +
                    " but " + backend.name() +
                    (host_cpu ? " runs at most " + std::to_string(limit) + " processes here (2 per core of " +
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
  throw ConfigError(key_location(run.file, "backend.strategy") +
                    ": strategy dp splits only the input over its replicas; "
                    "data set '" +
                    run.dataset->spec.name + "' gives named fields: use ddp");
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
      throw DistributedError(
          "LOCAL_RANK " + std::to_string(world->local_rank) + " has no device of its own: backend '" + backend.name() +
          "' has " + std::to_string(backend.probe().devices.size()) + "; start at most that many processes per node");
    return plan;
  }
  const Strategy asked = process_layout(e.backend.strategy.value_or(RunStrategy::ddp));
  // "auto": every device the backend lists (the host CPU lists one).
  const std::int64_t n =
      e.backend.devices ? *e.backend.devices : std::max<std::int64_t>(1, std::int64_t(backend.probe().devices.size()));
  MultiDevicePlan plan =
      backend.plan_multi_device({first_devices(n), n > 1 || e.backend.strategy ? asked : Strategy::single});
  if (plan.devices.empty()) plan.devices = {0};
  return plan;
}

}  // namespace

// train.precision bf16 or fp16 only where the backend has autocast kernels for it: elsewhere
// autocast would quietly compute in fp32.
void check_precision(const ValidatedRun& run, BackendHandle& backend) {
  const PrecisionMode precision = run.experiment.train.precision;
  if (precision == PrecisionMode::fp32) return;
  const std::vector<std::string> supported = backend.capabilities().autocast_precisions;
  const std::string word = word_of(precision);
  if (std::find(supported.begin(), supported.end(), word) != supported.end()) return;
  std::string listed;
  for (const std::string& p : supported) listed += (listed.empty() ? "" : ", ") + p;
  throw ConfigError(key_location(run.file, "train.precision") + ": train.precision = \"" + word + "\" but backend '" +
                    backend.name() + "' (" + backend.capabilities().device_type + ") has no " + word +
                    " autocast kernels (it has: " + (listed.empty() ? "none" : listed) + "); use \"fp32\"");
}

RunPlan plan_layout(const ValidatedRun& run, const BackendChoice& choice, const std::optional<World>& world) {
  const Experiment& e = run.experiment;
  RunPlan p;
  p.world = world;
  p.choice = choice;
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
  return p;
}

}  // namespace plugtrain
