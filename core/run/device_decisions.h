// The plan's decisions about how each training step uses the device, each made once here with
// the reason a person reads, and only read by the build and the loop:
//   train.graphs      every full step replayed from one recorded device graph (train/graph_step.h)
//   data.on_device    the data set kept on the training device, batches gathered there
//                     (data/device_resident.h)
//   the host heap     train.keep_host_memory on the host CPU (process/host_heap.h)
//   host reads        what makes every step wait for the device by design (task, recipe)
// graphs and on_device are "auto" by default: on where the backend and the run allow it, off
// with the reason otherwise; true fails with that reason instead, before a run folder is made.
#pragma once

#include <string>
#include <vector>

#include "plugins/backend_handle.h"
#include "run/plan.h"
#include "run/validate.h"

namespace plugtrain {

// Sets p.graph_conditions and p.graphs from the backend, the strategy, the optimizer and the
// task. A ConfigError naming train.graphs when true cannot be honoured.
void decide_graph_use(const ValidatedRun& run, RunPlan& p, BackendHandle& backend);

// Sets p.data_on_device. Weighing it reads the data set (run/run_data.h), which the build then
// trains on; a run on the host CPU with "auto" reads nothing here. An Error when true cannot be
// honoured.
void decide_data_residency(const ValidatedRun& run, RunPlan& p, BackendHandle& backend);

// Why every training step reads a device value on the host, by design of the task or recipe.
std::vector<std::string> step_host_reads(const ValidatedRun& run);

}  // namespace plugtrain
