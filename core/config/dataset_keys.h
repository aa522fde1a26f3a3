// data.label and data.synthetic_* were the [data] table's own keys before the bundled data sets
// moved into the datasets plugin (plugins/datasets), where they are options of cifar100 and
// synthetic: label, shape, classes, train_size and test_size. Experiments keep working both
// ways, for those two data sets of that plugin only (another plugin's `train_size` is its own):
//   - each of those keys written in the file (or --set) is copied into the [dataset] table under
//     the option's name, where the data set's schema checks it like any option;
//   - the resolved options are written back to the keys, so a run's resolved experiment.toml
//     says the same thing both ways (and re-runs and resumes as it is).
#pragma once

#include <string>

#include "config/experiment.h"
#include "config/experiment_loader.h"

namespace plugtrain {

// Throws ConfigError naming both keys when the [dataset] table sets the same option to another
// value.
void copy_data_keys_to_dataset(ExperimentFile& file, const std::string& dataset, const std::string& plugin);

// After the [dataset] table is resolved into e.data.dataset_options.
void copy_dataset_options_to_data_keys(Experiment& e, const std::string& plugin);

// "dataset.train_size" -> "data.synthetic_train_size": the [data] key that says the same, or ""
// (a sweep's report shows one of the two).
std::string data_key_twin(const std::string& dataset_key);

}  // namespace plugtrain
