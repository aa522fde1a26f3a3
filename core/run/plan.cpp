#include "run/plan.h"

#include <algorithm>
#include <cmath>
#include <ostream>

#include <ATen/Parallel.h>

#include "checkpoint/checkpoint_error.h"
#include "config/config_error.h"
#include "config/optimizer_table.h"
#include "config/resolved_experiment.h"
#include "optim/optimizers.h"
#include "run/device_decisions.h"
#include "run/device_layout.h"
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

}  // namespace

c10::Device device_of(const std::string& type, int index) {
  const c10::Device base(type);
  // The host CPU is one device, written "cpu" as LibTorch does.
  return base.is_cpu() ? base : c10::Device(base.type(), static_cast<c10::DeviceIndex>(index));
}

RunPlan plan_run(const ValidatedRun& run, const TrialResults& trials, const SelectionLimits& limits,
                 const std::optional<World>& world) {
  const Experiment& e = run.experiment;
  if (measures_backends(run, world) && !trials.fastest)
    throw Error("select = \"fastest\": the plan needs the trial steps' measurement (run/trials.h)");
  if (!e.data.batch_size && !trials.batch_size)
    throw Error("data.batch_size = \"auto\": the plan needs the trial steps' search (run/trials.h)");
  RunPlan p = plan_layout(run, trials.fastest ? *trials.fastest : select_backend(*run.host, e, limits), world);
  BackendHandle& backend = *p.choice.backend;
  const std::int64_t per_device = e.data.batch_size ? *e.data.batch_size : *trials.batch_size;
  if (!e.data.batch_size) p.batch_lines = trials.batch_lines;
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

