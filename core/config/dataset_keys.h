// data.label and data.synthetic_* were the [data] table's own keys before the bundled data sets
// moved into the datasets plugin (plugins/datasets), where they are options of cifar100 and
// synthetic: label, shape, classes, train_size and test_size. Experiments keep working: each of
// those keys written in the file (or --set) is copied into the [dataset] table under the
// option's name, where the data set's schema checks it like any option.
#pragma once

#include <vector>

#include "config/experiment_loader.h"
#include "plugtrain/options.h"

namespace plugtrain {

// Copies the keys that `options` (the data set's schema) declares. Throws ConfigError naming both
// keys when the [dataset] table sets the same option to another value.
void copy_data_keys_to_dataset(ExperimentFile& file, const std::vector<OptionSpec>& options);

}  // namespace plugtrain
