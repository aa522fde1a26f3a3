// The bundled readers (plugtrain/dataset.h): each reads its files with the [data] table's
// settings (DatasetQuery) into a DatasetRead, and checks data.path before any work.
#pragma once

#include "plugtrain/dataset.h"

namespace bundled_datasets {

plugtrain::DatasetRead read_idx(const plugtrain::DatasetQuery& query, const plugtrain::Options& options, const char* name);
plugtrain::DatasetRead read_cifar(const plugtrain::DatasetQuery& query, const plugtrain::Options& options, bool hundred);
// An image folder, or with `tiny_imagenet` TinyImageNet, whose val split is the read's validation
// split and whose test split has no labels.
plugtrain::DatasetRead read_images(const plugtrain::DatasetQuery& query, bool tiny_imagenet);
plugtrain::DatasetRead read_synthetic(const plugtrain::DatasetQuery& query, const plugtrain::Options& options);

// Throws "data.path '<path>' does not exist or is not a folder[ or archive]", with what to do
// when the path is the default one (Fashion-MNIST's Debian package).
void check_folder(const plugtrain::DatasetQuery& query, const char* name, bool archive_ok);

}  // namespace bundled_datasets
