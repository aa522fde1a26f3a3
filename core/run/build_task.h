// The run's task (task/task.h), built for the data set it trains on, and the log lines that
// say what it measures.
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "data/dataset.h"
#include "run/validate.h"
#include "task/task_registry.h"

namespace plugtrain {

// "10 classes", "1 value per sample", "10 labels per sample", "11 pixel classes".
std::string targets_text(const data::Dataset& d);

// The [task] of `run` for its training set: a ConfigError naming the file's key when the data
// set's targets are not the task's kind or an option does not fit it (class weights).
std::shared_ptr<Task> build_task(const TaskDefinition& spec, const ValidatedRun& run, const data::Dataset& train,
                                 std::ostream& log);

}  // namespace plugtrain
