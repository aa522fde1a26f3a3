// CIFAR-10 and CIFAR-100 in the official binary version (https://www.cs.toronto.edu/~kriz/cifar.html),
// from the extracted folder or straight from the downloaded .tar.gz.
//
// CIFAR-10: data_batch_1.bin .. data_batch_5.bin and test_batch.bin, records of 3073 bytes
// (label, then 1024 red, 1024 green, 1024 blue bytes of a 32x32 image); class names from
// batches.meta.txt. CIFAR-100: train.bin and test.bin, records of 3074 bytes (coarse label,
// fine label, pixels); names from fine_label_names.txt / coarse_label_names.txt. Files are
// found by name anywhere under the folder's top level or its cifar-*-b*/ subfolder, or
// anywhere in the archive. Images stay bytes (N,3,32,32).
#pragma once

#include <filesystem>
#include <string>

#include "config/choices.h"
#include "data/dataset.h"

namespace plugtrain::data {

enum class CifarKind { cifar10, cifar100 };

// labels: fine (100 classes) or coarse (20), CIFAR-100 only. Throws DataError naming the
// file for a missing batch, a size that is not whole records, batches of different lengths,
// or a label outside the classes.
DatasetPair load_cifar(const std::filesystem::path& path, CifarKind kind, CifarLabels labels = CifarLabels::fine);

}  // namespace plugtrain::data
