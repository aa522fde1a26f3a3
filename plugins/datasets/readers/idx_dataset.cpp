#include "readers/idx_dataset.h"

#include <algorithm>
#include <string>

#include <ATen/ATen.h>

#include "data/data_error.h"
#include "readers/idx_reader.h"
#include "util/format.h"

namespace plugtrain::data {
namespace {

namespace fs = std::filesystem;

// folder/name, or folder/name.gz; plain wins when both exist.
fs::path find_file(const fs::path& folder, const std::string& name) {
  std::error_code ec;
  if (fs::is_regular_file(folder / name, ec)) return folder / name;
  if (fs::is_regular_file(folder / (name + ".gz"), ec)) return folder / (name + ".gz");
  throw DataError(folder.string() + ": missing " + name + " (or " + name + ".gz)");
}

struct RawSplit {
  at::Tensor images;  // uint8 N,H,W
  at::Tensor labels;  // uint8 N
};

RawSplit read_split(const fs::path& folder, const std::string& prefix) {
  const fs::path images_path = find_file(folder, prefix + "-images-idx3-ubyte");
  const fs::path labels_path = find_file(folder, prefix + "-labels-idx1-ubyte");
  RawSplit raw{read_idx(images_path), read_idx(labels_path)};
  if (raw.images.dim() != 3)
    throw DataError(images_path.string() + ": expected 3 dims (N,H,W), got " + shape_text(raw.images.sizes()));
  if (raw.labels.dim() != 1)
    throw DataError(labels_path.string() + ": expected 1 dim (N), got " + shape_text(raw.labels.sizes()));
  if (raw.images.size(0) != raw.labels.size(0)) {
    throw DataError(images_path.string() + " has " + std::to_string(raw.images.size(0)) + " images but " +
                    labels_path.string() + " has " + std::to_string(raw.labels.size(0)) + " labels");
  }
  if (raw.images.size(0) == 0) throw DataError(images_path.string() + ": no images");
  // Labels are unsigned bytes, so every label is < 256 by construction.
  return raw;
}

}  // namespace

DatasetPair load_idx_dataset(const fs::path& folder, int64_t num_classes) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) throw DataError(folder.string() + ": no such folder");
  RawSplit train = read_split(folder, "train");
  RawSplit test = read_split(folder, "t10k");
  if (train.images.sizes().slice(1) != test.images.sizes().slice(1)) {
    throw DataError(folder.string() + ": training images are " + shape_text(train.images.sizes()) +
                    " but test images are " + shape_text(test.images.sizes()));
  }
  if (num_classes > 0) {
    check_labels(train.labels, num_classes, (folder / "train-labels-idx1-ubyte").string());
    check_labels(test.labels, num_classes, (folder / "t10k-labels-idx1-ubyte").string());
  }
  const int64_t max_label =
      num_classes > 0 ? num_classes - 1 : std::max(train.labels.max().item<int64_t>(), test.labels.max().item<int64_t>());
  auto make = [&](RawSplit& raw) {
    Dataset d;
    d.images = raw.images.unsqueeze(1);  // uint8 N,1,H,W
    d.labels = raw.labels.to(at::kLong);
    d.num_classes = max_label + 1;
    d.sample_shape = {1, raw.images.size(1), raw.images.size(2)};
    return d;
  };
  DatasetPair pair{make(train), make(test)};
  pair.train.normalization = byte_statistics(pair.train.images);
  pair.test.normalization = pair.train.normalization;
  return pair;
}

}  // namespace plugtrain::data
