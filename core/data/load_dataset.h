// One entry point for every data set the [data] table can name: reads it, applies the
// normalisation the experiment asks for, and says in lines a person reads what it did
// (decode speed, skipped images, the statistics).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "config/choices.h"
#include "data/dataset.h"
#include "plugtrain/dataset.h"

namespace plugtrain::data {

struct DataOptions {
  DatasetKind dataset = DatasetKind::fashion_mnist;
  // Or a data set a plugin registers (SDK 3.5), with its [dataset] options: then `dataset` is
  // not read.
  const DatasetSpec* plugin_dataset = nullptr;
  const DatasetFieldsFactory* plugin_fields_factory = nullptr;  // SDK 3.6: set for a data set with named fields
  std::string plugin;
  Options dataset_options;
  std::filesystem::path path;
  CifarLabels label = CifarLabels::fine;  // cifar100
  int64_t image_size = 0;          // image folders: sample side (0: 64)
  std::optional<ImageCache> cache;  // image folders; nullopt: "auto", memory when they fit
  int decode_threads = 0;          // image folders, cache: threads decoding (0: every core)
  bool skip_bad = false;           // image folders: skip undecodable images
  Normalize normalize = Normalize::dataset;  // (mean/std given: those)
  std::vector<double> mean, std;
  // normalize = "dataset": statistics a run stored when it began (its normalization.json), used
  // instead of computing them again, so a resumed run normalises as it began. `stored_from`
  // names the file in the log.
  std::optional<Normalization> stored;
  std::string stored_from;
  // synthetic
  std::vector<int64_t> synthetic_shape{1, 28, 28};
  int64_t synthetic_classes = 10, synthetic_train_size = 2000, synthetic_test_size = 500;
  TargetKind synthetic_targets = TargetKind::class_index;  // what the run's task learns
  uint64_t seed = 0;
};

struct LoadedData {
  DatasetPair data;
  std::string source;              // what was read, e.g. "cifar10 from /data/cifar-10-binary.tar.gz"
  std::string test_split = "test";  // the folder or file set evaluated on (image folders: val or test)
  bool cached = true;              // images decoded and in memory (false: decoded every epoch)
  std::vector<std::string> notes;  // lines for the log: decoding, skips, statistics
};

// Throws DataError naming the file and the cause.
LoadedData load_dataset(const DataOptions& options);

// "0.4914, 0.4822, 0.4465": per-channel values printed to 4 decimals.
std::string channel_text(const std::vector<double>& values);

}  // namespace plugtrain::data
