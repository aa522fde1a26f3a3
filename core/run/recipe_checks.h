// The training recipe's combinations that cannot work, refused before anything is built, each
// in one line at the key that asks for it (file:line:col): a validation monitor without a
// validation split (or a test monitor with one), mixup on a task without class labels, a
// one-cycle schedule with a separate warm-up, SWA with EMA or early stopping.
#pragma once

#include "config/experiment.h"
#include "config/experiment_loader.h"
#include "task/task_registry.h"

namespace plugtrain {

void check_recipe(const ExperimentFile& file, const Experiment& e, const TaskDefinition& task);

}  // namespace plugtrain
