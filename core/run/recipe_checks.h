// The training recipe's combinations that cannot work, refused before anything is built, each
// in one line at the key that asks for it (file:line:col): a validation monitor without a
// validation split (or a test monitor with one), mixup on a task without class labels, a
// one-cycle schedule with a separate warm-up, SWA with EMA or early stopping.
#pragma once

#include "config/experiment.h"
#include "config/experiment_loader.h"
#include "plugins/model_catalog.h"
#include "task/task_registry.h"

namespace plugtrain {

// Whether a run chooses its model by a validation split, known before any data is read:
// data.val_fraction holds one out of the training set, or the data set gives its own (SDK 3.8,
// tiny-imagenet's val). `dataset` may be null (a run built by hand).
bool has_validation_split(const Experiment& e, const RegisteredDataset* dataset);

// Where that split comes from, for messages: "data.val_fraction holds out a validation split".
std::string validation_source(const Experiment& e, const RegisteredDataset* dataset);

void check_recipe(const ExperimentFile& file, const Experiment& e, const TaskDefinition& task,
                  const RegisteredDataset* dataset);

}  // namespace plugtrain
