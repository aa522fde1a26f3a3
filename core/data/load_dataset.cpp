#include "data/load_dataset.h"

#include <algorithm>
#include <cstdio>

#include <ATen/ATen.h>

#include "data/cifar.h"
#include "data/data_error.h"
#include "data/image_folder.h"
#include "data/plugin_dataset.h"
#include "util/format.h"

namespace plugtrain::data {

namespace {

std::string mib(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", double(bytes) / (1024.0 * 1024.0));
  return text;
}

LoadedData load_images(const DataOptions& o, bool tiny_imagenet) {
  const ImageList list = tiny_imagenet ? scan_tiny_imagenet(o.path) : scan_image_folder(o.path);
  DecodeSettings settings;
  settings.image_size = o.image_size > 0 ? o.image_size : 64;
  settings.threads = o.decode_threads;
  settings.skip_bad = o.skip_bad;
  const int64_t bytes = decoded_bytes(int64_t(list.train.size() + list.test.size()), settings.image_size);
  const int64_t available = available_memory_bytes();
  settings.in_memory = o.cache == ImageCache::memory || (!o.cache && (available == 0 || bytes <= available / 2));

  LoadedData loaded;
  loaded.source = std::string(word_of(o.dataset)) + " from " + o.path.string();
  loaded.test_split = list.test_split;
  loaded.cached = settings.in_memory;
  DecodeReport train_report, test_report;
  loaded.data.train = image_dataset(list.train, list.class_names, settings, &train_report);
  loaded.data.test = image_dataset(list.test, list.class_names, settings, &test_report);
  if (settings.in_memory) {
    const int64_t decoded = train_report.decoded + test_report.decoded;
    const double seconds = train_report.seconds + test_report.seconds;
    loaded.notes.push_back("decoded " + std::to_string(decoded) + " images to " +
                           std::to_string(settings.image_size) + "x" + std::to_string(settings.image_size) + " in " +
                           fixed(seconds, 1) + " s (" + fixed(seconds > 0 ? double(decoded) / seconds : 0.0, 0) +
                           " images/s on " + std::to_string(train_report.threads) + " threads); cache " +
                           mib(bytes) + " in memory");
  } else {
    loaded.notes.push_back(o.cache == ImageCache::none ? "cache none: the loader decodes every epoch"
                                             : "cache none (" + mib(bytes) + " decoded would not fit in half of " +
                                                   mib(available) + " available): the loader decodes every epoch");
  }
  for (const auto* r : {&train_report, &test_report})
    if (r->skipped > 0)
      loaded.notes.push_back("skipped " + std::to_string(r->skipped) + " images that cannot be decoded (data.skip_bad); "
                             "the first: " + r->first_skipped);
  return loaded;
}

// The mean/std the loader normalises with, as the experiment asks.
void set_normalization(LoadedData& loaded, const DataOptions& o) {
  Dataset& train = loaded.data.train;
  if (!train.bytes()) return;  // synthetic: already normalised floats
  const auto channels = size_t(train.sample_shape.at(0));
  Normalization n;
  if (!o.mean.empty() || !o.std.empty()) {
    if (o.mean.size() != channels || o.std.size() != channels)
      throw DataError("data.mean and data.std need " + std::to_string(channels) + " values each (one per channel), got " +
                      std::to_string(o.mean.size()) + " and " + std::to_string(o.std.size()));
    n = {o.mean, o.std};
    loaded.notes.push_back("normalize: mean " + channel_text(n.mean) + ", std " + channel_text(n.std) + " (given)");
  } else if (o.normalize == Normalize::none) {
    n = {std::vector<double>(channels, 0.0), std::vector<double>(channels, 1.0)};
    loaded.notes.push_back("normalize: none (pixels scaled to [0, 1])");
  } else if (o.stored) {
    if (o.stored->mean.size() != channels || o.stored->std.size() != channels)
      throw DataError(o.stored_from + ": " + std::to_string(o.stored->mean.size()) + " channels stored, the data set has " +
                      std::to_string(channels));
    n = *o.stored;
    loaded.notes.push_back("normalize: training set mean " + channel_text(n.mean) + ", std " + channel_text(n.std) +
                           " (stored in " + o.stored_from + " when the run began)");
  } else if (train.images.defined()) {
    n = byte_statistics(train.images);
    loaded.notes.push_back("normalize: training set mean " + channel_text(n.mean) + ", std " + channel_text(n.std));
  } else {
    // Not in memory: the statistics of an evenly spaced sample of at most 5000 images.
    const int64_t count = std::min<int64_t>(5000, train.size()), stride = train.size() / count;
    const int64_t per = train.sample_shape[0] * train.sample_shape[1] * train.sample_shape[2];
    at::Tensor sample = at::empty({count, train.sample_shape[0], train.sample_shape[1], train.sample_shape[2]},
                                  at::TensorOptions().dtype(at::kByte));
    for (int64_t i = 0; i < count; ++i) train.decode(i * stride, sample.data_ptr<uint8_t>() + i * per);
    n = byte_statistics(sample);
    loaded.notes.push_back("normalize: mean " + channel_text(n.mean) + ", std " + channel_text(n.std) + " (from " +
                           std::to_string(count) + " training images)");
  }
  for (double s : n.std)
    if (!(s > 0)) throw DataError("data.std must be > 0 for every channel (got " + channel_text(n.std) + ")");
  train.normalization = loaded.data.test.normalization = n;
}

}  // namespace

std::string channel_text(const std::vector<double>& values) {
  std::string s;
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + fixed(values[i], 4);
  return s;
}

LoadedData load_dataset(const DataOptions& o) {
  LoadedData loaded;
  const std::string name = word_of(o.dataset);  // as the file names it
  if (o.plugin_dataset) {
    loaded = load_plugin_dataset(*o.plugin_dataset, o.plugin_fields_factory, o.plugin, o.dataset_options,
                                 {o.path.string(), o.seed});
    set_normalization(loaded, o);
    return loaded;
  }
  switch (o.dataset) {
    case DatasetKind::synthetic:
      loaded.data = make_synthetic(o.synthetic_shape, o.synthetic_classes, o.synthetic_train_size,
                                   o.synthetic_test_size, o.seed, o.synthetic_targets);
      loaded.source = name;
      break;
    case DatasetKind::fashion_mnist:
    case DatasetKind::mnist:
      loaded.data = load_idx_dataset(o.path, /*num_classes=*/10);
      loaded.source = name + " from " + o.path.string();
      break;
    case DatasetKind::cifar10:
    case DatasetKind::cifar100: {
      const bool ten = o.dataset == DatasetKind::cifar10;
      loaded.data = load_cifar(o.path, ten ? CifarKind::cifar10 : CifarKind::cifar100, o.label);
      loaded.source = name + (ten ? "" : std::string(" (") + word_of(o.label) + " labels)") + " from " + o.path.string();
      break;
    }
    case DatasetKind::image_folder:
    case DatasetKind::tiny_imagenet:
      loaded = load_images(o, o.dataset == DatasetKind::tiny_imagenet);
      break;
  }
  set_normalization(loaded, o);
  return loaded;
}

}  // namespace plugtrain::data
