// The build stage's side of the two choices that take host work out of every training step,
// as the plan decided them (run/device_decisions.h), each said in the run's log with its reason:
//   data.on_device   the data sets copied to the training device (data/device_resident.h)
//   train.graphs     the trainer given the backend's graph recorder (train/graph_step.h)
#pragma once

#include <ostream>

#include "config/experiment.h"
#include "data/dataset.h"
#include "plugins/backend_handle.h"
#include "run/plan.h"
#include "train/device_context.h"
#include "train/trainer.h"

namespace plugtrain {

// Sets device.train_on_device, test_on_device and val_on_device when the plan keeps the data
// on the device (copies the sets there).
void place_data(const Experiment& e, const RunPlan& plan, const data::DatasetPair& data, DeviceContext& device,
                std::ostream& log);

// Sets parts.make_graph_capture when the plan replays the steps from a recorded graph.
void use_graphs(const RunPlan& plan, TrainerParts& parts, std::ostream& log);

}  // namespace plugtrain
