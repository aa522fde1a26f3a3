// `plugtrain data`: what an experiment's [data] table resolves to, in words, and a grid of
// augmented training samples so a person can see that crops, flips and colours look right.
#pragma once

#include <iosfwd>

#include "config/experiment.h"
#include "data/image_codec.h"
#include "data/load_dataset.h"

namespace plugtrain {

// Splits, counts per split and per class, classes with names, sample shape, normalisation,
// cache, augmentation.
void print_data_report(const Experiment& e, const data::LoadedData& loaded, std::ostream& out);

// The first `count` training samples of epoch 0 exactly as the run's loader augments them
// (same seed), un-normalised, `columns` per row, each labelled with its class. Small images
// are enlarged so the labels stay readable.
data::Image augmented_sample_grid(const Experiment& e, const data::Dataset& train, int count, int columns);

}  // namespace plugtrain
