#include "run/build_strategy.h"

#include <algorithm>
#include <ostream>

#include "config/config_error.h"
#include "config/experiment_loader.h"
#include "distributed/data_parallel.h"
#include "optim/optimizers.h"
#include "plugins/backend_handle.h"
#include "run/build.h"
#include "run/device_settings.h"
#include "strategy/activation_checkpoint.h"
#include "strategy/ddp_strategy.h"
#include "strategy/dp_strategy.h"
#include "strategy/fsdp_strategy.h"
#include "strategy/model_units.h"
#include "strategy/single_device.h"
#include "util/format.h"

namespace plugtrain {

namespace {

// dp: `model` is replica 0; the factory builds the others, one per further device.
std::unique_ptr<DataParallel> make_replicas(const RegisteredModel& entry, const ModelDescription& description,
                                            const Experiment& e, std::shared_ptr<Model> model, const RunPlan& plan,
                                            at::MemoryFormat format, std::ostream& log) {
  std::vector<std::shared_ptr<Model>> replicas{std::move(model)};
  std::vector<c10::Device> devices{plan.device};
  std::string names = plan.device.str();
  for (std::size_t i = 1; i < plan.devices.devices.size(); ++i) {
    devices.push_back(device_of(plan.capabilities.device_type, plan.devices.devices[i]));
    std::shared_ptr<Model> replica = build_model(entry, description, e);
    replica->to(devices.back());
    convert_memory_format(*replica, format);
    replicas.push_back(std::move(replica));
    names += ", " + devices.back().str();
  }
  log << "dp: " << replicas.size() << " replicas in this process on " << names << "; gradients summed on "
      << devices[0].str() << "\n";
  return std::make_unique<DataParallel>(std::move(replicas), std::move(devices));
}

// train.activation_checkpointing = "blocks" needs units to checkpoint; single, dp and ddp runs
// get the checkpointing runner (fsdp's own runner checkpoints as it runs each unit).
void check_units_to_checkpoint(const ValidatedRun& run, Model& model, bool set_runner, std::ostream& log) {
  if (run.experiment.train.activation_checkpointing == ActivationCheckpointing::none) return;
  const UnitLayout layout = unit_layout(model);
  if (!layout.declared || layout.root() == 0)
    throw ConfigError(key_location(run.file, "train.activation_checkpointing") +
                      ": train.activation_checkpointing = \"blocks\" but model '" + run.experiment.model.name +
                      "' declares no units (blocks) to checkpoint; set it to \"none\"");
  if (!set_runner) return;
  static CheckpointingRunner checkpointing;
  layout.declared->set_runner(&checkpointing);
  log << "activation checkpointing: " << units_line(layout) << "; each unit runs again in backward\n";
}

// fsdp gathers the root and a unit at once (and the next unit meanwhile): a unit that cannot fit
// beside the root in the device's memory cannot train, however many ranks share the rest.
void check_units_fit(const ValidatedRun& run, const RunPlan& plan, Model& model, at::ScalarType param_dtype) {
  const MemoryInfo memory = plan.choice.backend->memory(plan.devices.devices.at(0));
  if (!memory.total_bytes) return;
  const UnitLayout layout = unit_layout(model);
  std::int64_t largest = 0;
  for (std::size_t i = 0; i < layout.root(); ++i) largest = std::max(largest, layout.units[i].elements);
  const auto needed = static_cast<std::uint64_t>((layout.units.back().elements + largest) *
                                                 std::int64_t(c10::elementSize(param_dtype)));
  if (needed <= *memory.total_bytes) return;
  throw ConfigError(key_location(run.file, "backend.strategy") + ": fsdp gathers a unit beside the root, " +
                    format_bytes(needed) + " of parameters at once, more than the " +
                    format_bytes(*memory.total_bytes) + " of " + plan.device.str() +
                    "; declare smaller units in the model or use devices with more memory");
}

}  // namespace

std::unique_ptr<TrainingStrategy> make_strategy(const ValidatedRun& run, const RunPlan& plan,
                                                const ModelDescription& description, at::MemoryFormat format,
                                                Collectives* collectives, const std::shared_ptr<Model>& model,
                                                std::ostream& log) {
  const Experiment& e = run.experiment;
  const bool sharded = collectives && plan.shard;
  check_units_to_checkpoint(run, *model, /*set_runner=*/!sharded, log);
  if (plan.strategy == Strategy::dp)
    return std::make_unique<DpStrategy>(*model, make_replicas(*run.model, description, e, model, plan, format, log));
  if (sharded) {
    FsdpOptions options;
    options.device = plan.device;
    options.level = *plan.shard;
    options.checkpoint_units = e.train.activation_checkpointing == ActivationCheckpointing::blocks;
    options.param_dtype = e.distributed.param_dtype == ShardDtype::bf16 ? at::kBFloat16 : at::kFloat;
    options.reduce_dtype = e.distributed.reduce_dtype == ShardDtype::bf16 ? at::kBFloat16 : at::kFloat;
    options.whole_optimizer = [e, lr = plan.batch.lr](const std::vector<at::Tensor>& parameters) {
      return make_optimizer(e, lr, parameters);
    };
    check_units_fit(run, plan, *model, options.param_dtype);  // before any of it reaches the device
    return std::make_unique<FsdpStrategy>(*model, *collectives, options, log);
  }
  if (e.backend.strategy == RunStrategy::fsdp)
    log << "fsdp: one process, nothing to shard: it trains as a single device\n";
  if (collectives) return std::make_unique<DdpStrategy>(*model, *collectives, e.distributed.bucket_mb * 1024 * 1024);
  return std::make_unique<SingleDevice>(*model);
}

}  // namespace plugtrain
