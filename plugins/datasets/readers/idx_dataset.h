// MNIST-style IDX folders (MNIST, Fashion-MNIST) as a Dataset pair.
#pragma once

#include <cstdint>
#include <filesystem>

#include "data/dataset.h"

namespace plugtrain::data {

// Reads train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte and
// t10k-labels-idx1-ubyte (each plain or with .gz) from folder. Images stay bytes (N,1,H,W).
// Throws DataError.
// num_classes > 0: the data set's own number of classes (10 for MNIST and Fashion-MNIST); a
// label outside it is a DataError naming the file, the sample and the label, rather than
// silently another number of classes. 0: the largest label + 1.
DatasetPair load_idx_dataset(const std::filesystem::path& folder, int64_t num_classes = 0);

}  // namespace plugtrain::data
