// Seeded synthetic data for every kind of target: tests, benchmarks and the doctor's smoke test.
#pragma once

#include <cstdint>
#include <vector>

#include "data/dataset.h"

namespace plugtrain::data {

// A learnable data set, identical for the same arguments: one fixed random prototype per
// class plus gaussian noise, normalised with the training set's mean and std (float images).
// `targets` says what is learnt from an image:
//   class_index  its class;
//   multi_hot    the (one or two) classes whose prototypes were added to it;
//   real         u in [0, 1) (N,1), by which a fixed pattern was added to it (scaled to [-2, 2));
//   pixel_class  per pixel, its class + 1 where the prototype's first channel is positive, else
//                0 (num_classes + 1 classes);
//   sequence     a strip: the width is W / H slots of H x H; the first 1 to all of them hold a
//                class's prototype (its first H columns) each, the rest noise; the classes in
//                order, padded with -1.
DatasetPair make_synthetic(std::vector<int64_t> sample_shape, int64_t num_classes, int64_t train_size,
                           int64_t test_size, uint64_t seed, DatasetTargets targets = DatasetTargets::class_index);

}  // namespace plugtrain::data
