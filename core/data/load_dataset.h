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

// Every data set comes from a plugin, the bundled ones (fashion-mnist, cifar10, image-folder,
// synthetic…, plugins/datasets) included: `dataset` names its registration (and its reader).
struct DataOptions {
  const DatasetSpec* dataset = nullptr;
  std::string plugin;
  Options dataset_options;  // the [dataset] table, checked against the data set's schema
  std::filesystem::path path;
  // What a reader honours (plugtrain::DatasetQuery).
  int64_t image_size = 0;           // decoded side (0: the reader's own)
  std::optional<ImageCache> cache;  // nullopt: "auto", in memory when the images fit
  int decode_threads = 0;           // threads decoding a cache (0: every core)
  bool skip_bad = false;            // skip undecodable images
  DatasetTargets task_targets = DatasetTargets::class_index;  // what the run's task learns (synthetic data follows it)
  Normalize normalize = Normalize::dataset;  // (mean/std given: those)
  std::vector<double> mean, std;
  // normalize = "dataset": statistics a run stored when it began (its normalization.json), used
  // instead of computing them again, so a resumed run normalises as it began. `stored_from`
  // names the file in the log.
  std::optional<Normalization> stored;
  std::string stored_from;
  uint64_t seed = 0;
};

struct LoadedData {
  DatasetPair data;
  std::string source;              // what was read, e.g. "cifar10 from /data/cifar-10-binary.tar.gz"
  std::string test_split = "test";  // the folder or file set evaluated on (image folders: val or test)
  // The data set's own validation split, in data.val: its name ("val", "dev"); empty
  // when the data set has none (data.val_fraction may then hold one out of the training set).
  std::string own_val_split;
  // The data set has no labelled test split (TinyImageNet): data.test is its val split too.
  bool test_unlabelled = false;
  bool cached = true;              // images decoded and in memory (false: decoded every epoch)
  std::vector<std::string> notes;  // lines for the log: decoding, skips, statistics
};

// Throws DataError naming the data set, its plugin, the file and the cause.
LoadedData load_dataset(const DataOptions& options);

// The normalisation `o` settles without looking at the data: the given mean and std, none, or
// the statistics stored when the run began (a channel count other than `channels` is a
// DataError naming the file); nullopt: the training set's statistics are to be computed.
// `note` gets the log line. load_dataset and `plugtrain predict` both choose by it.
std::optional<Normalization> settled_normalization(const DataOptions& o, size_t channels, std::string& note);

// "0.4914, 0.4822, 0.4465": per-channel values printed to 4 decimals.
std::string channel_text(const std::vector<double>& values);

}  // namespace plugtrain::data
