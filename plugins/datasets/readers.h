// The bundled readers as SDK 3.7 readers (plugtrain/dataset.h): each reads its files with the
// [data] table's settings into a DatasetRead, and checks data.path before any work.
#pragma once

#include "plugtrain/dataset.h"

namespace bundled_datasets {

plugtrain::DatasetRead read_idx(const plugtrain::DatasetRequest& request, const plugtrain::DatasetReadSettings& settings,
                                const plugtrain::Options& options, const char* name);
plugtrain::DatasetRead read_cifar(const plugtrain::DatasetRequest& request, const plugtrain::Options& options, bool hundred);
// An image folder, or with `tiny_imagenet` TinyImageNet, whose val split goes there (SDK 3.8)
// and whose test split has no labels.
plugtrain::DatasetRead read_images(const plugtrain::DatasetRequest& request, const plugtrain::DatasetReadSettings& settings,
                                   plugtrain::DatasetValidation* tiny_imagenet);
plugtrain::DatasetRead read_synthetic(const plugtrain::DatasetRequest& request, const plugtrain::DatasetReadSettings& settings,
                                      const plugtrain::Options& options);

// Throws "data.path '<path>' does not exist or is not a folder[ or archive]", with what to do
// when the path is the default one (Fashion-MNIST's Debian package).
void check_folder(const plugtrain::DatasetRequest& request, const char* name, bool archive_ok);

}  // namespace bundled_datasets
