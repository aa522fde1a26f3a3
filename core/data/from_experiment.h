// The [data] table of an experiment as the data layer's options: what to load and how to
// augment it.
#pragma once

#include "config/experiment.h"
#include "data/augment.h"
#include "data/load_dataset.h"

namespace plugtrain::data {

DataOptions data_options(const Experiment& e);
AugmentOptions augment_options(const AugmentConfig& c);

}  // namespace plugtrain::data
