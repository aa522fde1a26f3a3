#include "run/device_decisions.h"

#include <optional>

#include "config/config_error.h"
#include "config/optimizer_table.h"
#include "data/device_resident.h"
#include "data/from_experiment.h"
#include "optim/fused_optimizers.h"
#include "train/graph_step.h"
#include "util/error.h"
#include "util/format.h"

namespace plugtrain {

namespace {

// The task's own reason its loss reads a device value on the host every step, or nothing.
std::optional<std::string> task_host_read(const ValidatedRun& run) {
  if (!run.task || run.task->loss_waits_for_host.empty()) return std::nullopt;
  return "task '" + run.task->name + "': " + run.task->loss_waits_for_host;
}

// An accumulated step is one recording of all its micro-batches (graph_step.h), but with several
// processes c10d's reducer would have to run between them; mixing turns some batches' class
// labels into class probabilities, which is not one fixed recording (the eager steps run
// instead, and the log says so).
Status recipe_replayable(const Experiment& e, int processes) {
  if (e.train.accumulate_steps > 1 && processes > 1)
    return WhyNot{"train.accumulate_steps = " + std::to_string(e.train.accumulate_steps) + " with " +
                  std::to_string(processes) +
                  " processes steps eagerly (ddp's gradient sync runs in the last "
                  "micro-batch's backward, which a recording cannot hold)"};
  if (e.data.mixup_alpha > 0 || e.data.cutmix_alpha > 0)
    return WhyNot{"mixup/CutMix give mixed batches targets of another type than unmixed ones"};
  if (e.backend.strategy == RunStrategy::fsdp && processes > 1)
    return WhyNot{"fsdp gathers and releases parameters during the step, which a recording cannot hold"};
  if (e.train.activation_checkpointing != ActivationCheckpointing::none)
    return WhyNot{
        "activation checkpointing puts the random state back and runs backward again inside backward, "
        "which a recording cannot replay"};
  return Status::fine();
}

// Whether the data may stay on the device (nullopt), or why not.
std::optional<std::string> data_stays_on_host(const Experiment& e, const RunPlan& p, BackendHandle& backend,
                                              const data::DatasetPair& data, const data::AugmentOptions& augmentation,
                                              std::int64_t bytes) {
  if (Status servable = data::servable_on_device(data.train, augmentation); !servable) return servable.why_not();
  if (Status servable = data::servable_on_device(data.test, {}); !servable) return servable.why_not();
  if (data.has_val())
    if (Status servable = data::servable_on_device(data.val, {}); !servable) return servable.why_not();
  if (e.data.on_device == true) return std::nullopt;
  const MemoryInfo memory = backend.memory(p.devices.devices.at(0));
  if (!memory.free_bytes)
    return "the device's free memory is unknown" + (memory.note.empty() ? "" : " (" + memory.note + ")");
  if (bytes > std::int64_t(*memory.free_bytes / 4))
    return format_bytes(std::uint64_t(bytes)) + " is more than a quarter of the device's free " +
           format_bytes(memory.free_bytes);
  return std::nullopt;
}

}  // namespace

void decide_graph_use(const ValidatedRun& run, RunPlan& p, BackendHandle& backend) {
  const Experiment& e = run.experiment;
  GraphConditions& c = p.graph_conditions;
  c.setting = e.train.graphs;
  const int device = p.devices.devices.at(0);
  if (c.setting != false)
    if (auto capture = backend.make_graph_capture(device); !capture) c.backend_records = WhyNot{capture.why_not()};
  c.replicas = p.strategy == Strategy::dp ? static_cast<int>(p.devices.devices.size()) : 1;
  c.processes = p.processes;
  c.skip_nonfinite = e.train.on_nonfinite == OnNonfinite::skip_step;
  c.optimizer_replayable = replayable_on(e.optim.name, e.optim.impl, device_of(p.capabilities.device_type, device));
  if (const auto why = task_host_read(run)) c.loss_replayable = WhyNot{*why};
  if (run.dataset && run.dataset->has_fields())
    c.fixed_batches = WhyNot{"data set '" + run.dataset->spec.name +
                             "' gives named fields (variable-length inputs with "
                             "their lengths), which the model reads eagerly in every step"};
  c.accumulate_steps = e.train.accumulate_steps;
  c.recipe = recipe_replayable(e, p.processes);
  try {
    p.graphs = decide_graphs(c);
  } catch (const Error& error) { throw ConfigError(key_location(run.file, "train.graphs") + ": " + error.what()); }
}

void decide_data_residency(const ValidatedRun& run, RunPlan& p, BackendHandle& backend) {
  const Experiment& e = run.experiment;
  DataResidency& d = p.data_on_device;
  d = DataResidency{};
  if (e.data.on_device == false) return;
  if (p.capabilities.host_cpu && e.data.on_device != true) {
    // Not said in the log: on the host a batch is made where it trains anyway.
    d.why_not = "the training device is the host, whose memory the loader threads already use";
    return;
  }
  const data::LoadedData loaded = run.data->get();
  const data::DatasetPair& data = loaded.data;
  const data::AugmentOptions augmentation = data::augment_options(e.data.augment);
  // A data set without test labels (TinyImageNet) is tested on its val split: one copy serves both.
  d.bytes = data::bytes_on_device(data.train, augmentation) + data::bytes_on_device(data.test, {}) +
            (data.has_val() && !data.test_is_val ? data::bytes_on_device(data.val, {}) : 0);
  if (const auto why = data_stays_on_host(e, p, backend, data, augmentation, d.bytes)) {
    if (e.data.on_device == true) throw Error("data.on_device = true, but " + *why);
    d.why_not = *why;
    return;
  }
  d.use = true;
}

std::vector<std::string> step_host_reads(const ValidatedRun& run) {
  std::vector<std::string> reads;
  if (const auto why = task_host_read(run)) reads.push_back(*why);
  if (run.experiment.train.on_nonfinite == OnNonfinite::skip_step)
    reads.push_back(
        "train.on_nonfinite = \"skip_step\" reads whether each step's gradients are finite before its "
        "optimizer step");
  return reads;
}

}  // namespace plugtrain
