// The host's in-memory data set, whatever plugin read it (the bundled readers are
// plugins/datasets): its normalisation statistics, label noise, subsets.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "plugtrain/dataset.h"  // DatasetTargets: what one sample's target is

namespace plugtrain::data {

// Per-channel statistics on the [0, 1] pixel scale: the loader turns a byte pixel v into
// (v / 255 - mean[c]) / std[c]. Empty: the images are float and already normalised.
struct Normalization {
  std::vector<double> mean, std;
  bool empty() const { return mean.empty(); }
};

struct Dataset {
  // uint8 N,C,H,W pixels (image data sets), or float32 N,C,H,W already normalised
  // (synthetic); CPU, contiguous. Undefined when `decode` produces the pixels on demand.
  // Or int64 N,T token ids (a text data set): usually overlapping windows of one token stream
  // (a strided view, one window per offset), which the loader gathers without copying the rest.
  at::Tensor images;
  // Decodes sample i on demand (data.cache = "none"; plugtrain/dataset.h): called from several
  // loader threads at once, so it must be thread-safe; throws DataError naming the file.
  SampleDecoder decode;
  // The targets, one row per sample, of the kind `target_kind` says: int64 N class labels;
  // float N,K multi-hot labels; float N or N,D values; int64 N,H,W pixel classes.
  at::Tensor labels;
  DatasetTargets target_kind = DatasetTargets::class_index;
  int64_t num_classes = 0;  // classes (labels, for multi_hot; 0 for real values)
  std::vector<int64_t> sample_shape;  // C,H,W
  std::vector<std::string> class_names;  // empty, or one per class
  Normalization normalization;        // how the loader normalises byte pixels
  // Per-sample tensors beside the images and labels (a plugin's data set, SDK 3.6), one row per
  // sample, on the CPU: "input_lengths" (int64 N) for variable-length inputs. Batches carry them.
  std::map<std::string, at::Tensor> fields;
  // The tokenizer file the token ids came from (SDK 4.2), opened with the data set's
  // TokenizerOpener; the run keeps a copy (run/classes_file.h). Empty: none.
  std::string tokenizer_file;

  int64_t size() const { return labels.defined() ? labels.size(0) : 0; }
  bool bytes() const { return !images.defined() || images.scalar_type() == at::kByte; }
  bool tokens() const { return images.defined() && images.scalar_type() == at::kLong; }
};

struct DatasetPair {
  Dataset train, test;
  // Chooses the model: held out of the training set (data.val_fraction), or the data set's own
  // (SDK 3.8); size 0: none, and the run monitors the test set as it did before validation splits.
  Dataset val;
  // The test split is the val split (a data set without test labels, TinyImageNet): its figures
  // are not independent of the model's choice.
  bool test_is_val = false;
  bool has_val() const { return val.size() > 0; }
};

// Per-channel mean and population std of byte images (N,C,H,W) on the [0, 1] scale, exact
// (from one 256-bin histogram per channel). A constant channel gets std 1: centred only.
Normalization byte_statistics(const at::Tensor& images);

// Gives exactly round(p*N) samples of d, chosen by a permutation seeded with seed, a
// different random class. Returns how many labels changed. d.labels is replaced by a new
// tensor (tensors shared with other Datasets are left alone).
int64_t apply_label_noise(Dataset& d, double p, uint64_t seed);

// The data set's fields for messages: "input_lengths (int64, 7 to 16)"; empty when it has none.
std::string fields_text(const Dataset& d);

// The first n samples (sharing memory with d); n <= 0 or n >= N means all of d.
Dataset subset(const Dataset& d, int64_t n);

// A label outside [0, num_classes) is a DataError: "<where>: label L of sample S is outside
// the data set's C classes (0..C-1; K such labels)".
void check_labels(const at::Tensor& labels, int64_t num_classes, const std::string& where);

}  // namespace plugtrain::data
