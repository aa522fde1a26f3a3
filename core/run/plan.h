// Stage 3 of a run: everything the run decides, as a function of the validated experiment, the
// trial steps' results (run/trials.h), the probed backends and the process world — backend and
// devices, strategy, per-device and global batch, the learning rate, loader settings, threads —
// each with the reason a person reads. It times no step and builds nothing (weighing whether the
// data fits on the device reads the data set, once, for the build). The experiment itself stays
// as the user wrote it.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <c10/core/Device.h>

#include "distributed/world.h"
#include "run/trials.h"
#include "run/validate.h"
#include "select/backend_selection.h"
#include "train/graph_step.h"

namespace plugtrain {

// The global batch split over the devices, and the learning rate scaled for it.
struct BatchPlan {
  std::int64_t per_device = 0;  // samples each device trains on per step
  std::int64_t global = 0;      // samples per optimizer step over all devices
  std::int64_t loader = 0;      // samples this process's loader gives per step (dp: the global batch)
  double lr_factor = 1;         // optim.lr_scaling applied to global / data.batch_size
  double lr = 0;                // optim.lr x lr_factor
};

// data.on_device, as the plan decided it (run/device_decisions.h).
struct DataResidency {
  bool use = false;        // the data sets are copied to the device and batches gathered there
  std::string why_not;     // when not: why (empty when data.on_device = false said so)
  std::int64_t bytes = 0;  // what the copies take on the device
};

struct RunPlan {
  BackendChoice choice;           // the backend and why
  Capabilities capabilities;      // what the host knows about its devices
  MultiDevicePlan devices;        // the backend's plan: strategy, device indices, collective, warnings
  Strategy strategy = Strategy::single;  // single, dp (replicas here) or ddp (one process per device)
  std::optional<ShardLevel> shard;       // fsdp: ddp's processes, the model's state sharded over them
  std::optional<World> world;     // set when a launcher started this process as one rank
  bool launches_workers = false;  // ddp without a launcher: this process starts `processes` workers
  int processes = 1;              // ranks that train together
  std::int64_t devices_used = 1;  // devices over which a step's global batch is split
  int rank = 0;
  c10::Device device = c10::Device(c10::kCPU);  // this process's (dp: the first replica's)
  LoaderConfig loader;
  int threads = 0;                // LibTorch intra-op threads to set (0: leave LibTorch's default)
  BatchPlan batch;
  std::vector<std::string> batch_lines;  // data.batch_size = "auto": how the size was found
  std::string record;             // the resolved experiment with what the run decided (global batch)
  GraphConditions graph_conditions;  // train.graphs: what decided it
  GraphDecision graphs;           // whether full steps are replayed from a recorded graph, and why
  DataResidency data_on_device;   // data.on_device: whether the data sets live on the device, and why
  bool keep_host_memory = false;  // the host heap keeps freed memory (train.keep_host_memory on the host CPU)
  // Why every training step reads a device value on the host, waiting for the device (empty:
  // no step needs to; the epoch line's "host syncs" shows what a counting backend saw).
  std::vector<std::string> step_host_reads;

  bool writes_outputs() const { return rank == 0; }  // only rank 0 prints and writes files
};

// `trials`: run_trials of the same run, limits and world. Throws ConfigError for a batch that
// does not split, Error when no backend can be used or a resume would not continue the same
// run, DistributedError for a launcher it cannot serve.
RunPlan plan_run(const ValidatedRun& run, const TrialResults& trials, const SelectionLimits& limits,
                 const std::optional<World>& world);

// The plan of a trial (run/trial_steps.h): `batch` samples a step on `device` of `backend`, one
// process, checked as a run on that backend would be (precision, train.graphs = true). Graphs
// are decided as for a run when `graphs`, else the trial steps eagerly (the batch search, whose
// sizes change from trial to trial). Reads the data when it weighs keeping it on the device.
RunPlan trial_plan(const ValidatedRun& run, BackendHandle& backend, int device, std::int64_t batch, bool graphs);

// The plan's lines, as a run prints them: backend choice and warnings, device and loader, batch.
void print_plan(const RunPlan& plan, const Experiment& e, std::ostream& log);

c10::Device device_of(const std::string& type, int index);

}  // namespace plugtrain
