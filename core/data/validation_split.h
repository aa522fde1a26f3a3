// The validation split (data.val_fraction): a seeded share of the training set held out for
// model selection, so the test set stays out of it. The same seed gives the same split on every
// rank and on every resume.
#pragma once

#include <cstdint>

#include "data/dataset.h"

namespace plugtrain::data {

// Moves round(fraction * N) samples of `train`, chosen by a permutation seeded with `seed`, into
// the returned validation set; `train` keeps the others, in their order. Both keep the data
// set's classes, normalisation and fields. A data set decoded on demand keeps decoding through
// the original indices. Throws DataError when either part would be empty.
Dataset split_validation(Dataset& train, double fraction, uint64_t seed);

}  // namespace plugtrain::data
