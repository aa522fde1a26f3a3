// The build stage's two choices that take host work out of every training step, each said in
// the run's log with its reason:
//   data.on_device   the data set kept on the training device, batches gathered there
//                    (data/device_resident.h)
//   train.graphs     every full step replayed from one recorded device graph
//                    (train/graph_step.h)
// Both are "auto" by default: on where the backend and the run allow it, off with the reason
// otherwise; true fails with that reason instead.
#pragma once

#include <ostream>

#include "config/experiment.h"
#include "data/dataset.h"
#include "plugins/backend_handle.h"
#include "run/plan.h"
#include "train/device_context.h"
#include "train/trainer.h"

namespace plugtrain {

// data.on_device: sets device.train_on_device and test_on_device (copies the sets there).
void place_data(const Experiment& e, const RunPlan& plan, BackendHandle& backend, int device_index,
                const data::DatasetPair& data, DeviceContext& device, std::ostream& log);

// train.graphs, as the plan decided it: sets parts.make_graph_capture when the steps are
// replayed from a graph. `parts` must have its optimizer.
void use_graphs(const RunPlan& plan, BackendHandle& backend, int device_index, TrainerParts& parts, std::ostream& log);

}  // namespace plugtrain
