// Which split does what in a run, settled once the data set is read: the validation split that
// chooses the model (held out by data.val_fraction, or the data set's own, SDK 3.8) and the test
// split evaluated at the end; and the lines that say so in every run's log.
#pragma once

#include <ostream>

#include "config/experiment.h"
#include "data/load_dataset.h"

namespace plugtrain {

// Applies data.train_subset, data.test_subset (to the test split only) and data.val_fraction to
// `loaded.data`. With data.val_fraction the held-out share validates: a data set's own val
// split is then the test split when the data set has no labelled test (TinyImageNet), and is
// not used otherwise (the log says so). Without it, such a data set's test split is its val
// split (DatasetPair::test_is_val).
void settle_splits(const Experiment& e, data::LoadedData& loaded);

// "data: ..." lines: the splits' sizes, which one chooses the model, when the test set is
// evaluated.
void log_splits(const Experiment& e, const data::LoadedData& loaded, const data::DatasetPair& data, std::ostream& log);

}  // namespace plugtrain
