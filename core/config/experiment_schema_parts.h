// The experiment schema's keys (config/experiment_schema.h), a file per group of tables; each
// returns its keys in the file's order, and experiment_schema() joins them in table order.
#pragma once

#include <vector>

#include "config/experiment_schema.h"

namespace plugtrain {

// [experiment], [backend], [plugins], [model], [task]
std::vector<ConfigKey> setup_keys();
// [data]
std::vector<ConfigKey> data_keys();
// [optim], [schedule], [checkpoint], [early_stopping], [distributed], [train], [logging]
std::vector<ConfigKey> training_keys();

}  // namespace plugtrain
