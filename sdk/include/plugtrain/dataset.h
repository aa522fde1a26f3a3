// plugtrain SDK 5 — data sets from plugins.
//
// A plugin registers data sets by name (Registrar::add_dataset), each with an option schema (the
// experiment's [dataset] table, checked before any work like a model's options) and a reader:
// given what the experiment says (DatasetQuery), it returns its splits (DatasetRead), in memory
// or decoded on demand, with named per-sample fields and its own validation split where it has
// them. The host treats every data set alike (the bundled ones are the `datasets` plugin's):
// normalisation from the training split's statistics, augmentation, the batch loader, data kept
// on the device.
//
// DatasetQuery, BatchDescription and TargetDescription are implemented by the host: what it
// tells the plugin. DatasetSpec and DatasetRead are the plugin's answers.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <c10/core/ScalarType.h>
#include <ATen/core/Tensor.h>  // the Tensor type alone: not all of ATen (torch/types.h) for every plugin file

#include "plugtrain/options.h"
#include "plugtrain/plugin.h"

namespace plugtrain {

// Tensors by name: a batch's fields, a model's outputs ("output", "output_lengths").
using TensorMap = std::map<std::string, at::Tensor>;

// What one sample's target is; the run's [task] must learn this kind (`plugtrain tasks`).
enum class DatasetTargets {
  class_index = 0,  // int64 (N): one class per sample (task classification)
  multi_hot = 1,    // float (N, K): 1 for each of the K labels that applies (multilabel)
  real = 2,         // float (N) or (N, D): values to predict (regression)
  pixel_class = 3,  // int64 (N, H, W): a class per pixel (segmentation)
  sequence = 4,     // int64 (N, S): classes in order, padded at the end with -1 (sequence)
  as_task = 5,      // the data set makes the kind the run's task learns (synthetic data):
                    // DatasetQuery::task_targets says which, DatasetRead::targets says it back
  next_token = 6,   // int64 (N, T): the token that follows each position of the input window
                    // (language_model); inputs are int64 (N, T) token ids
};

// Implemented by the host: what the experiment says about reading.
class DatasetQuery {
 public:
  virtual ~DatasetQuery() = default;
  virtual std::string path() const = 0;           // data.path
  virtual std::uint64_t seed() const = 0;         // experiment.seed, for data sets that draw at random
  virtual std::int64_t image_size() const = 0;    // data.image_size: the side images are decoded to (0: the reader's own)
  virtual int cache() const = 0;                  // data.cache: -1 "auto" (in memory when it fits), 0 "none", 1 "memory"
  virtual int decode_threads() const = 0;         // threads that decode a cache (0: every core)
  virtual bool skip_bad() const = 0;              // data.skip_bad: skip undecodable images (and say so in a note)
  virtual DatasetTargets task_targets() const = 0;  // the kind the run's task learns
};

// Decodes sample `index` into `pixels` (uint8 C, H, W of the split's sample shape). The loader
// calls it from several threads at once: it must be thread-safe. Throws std::exception with one
// line naming the file.
using SampleDecoder = std::function<void(std::int64_t index, std::uint8_t* pixels)>;

// Implemented by the plugin: a tokenizer read from its file.
class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  virtual std::int64_t size() const = 0;  // its vocabulary: ids are 0..size()-1
  virtual std::vector<std::int64_t> encode(const std::string& text) const = 0;
  // The UTF-8 text of `ids`, as the tokenizer's own decoder gives it (spaces, bytes, ...).
  virtual std::string decode(const std::vector<std::int64_t>& ids) const = 0;
  // Each id's piece as the tokenizer names it ("\u2581the", "\u0120the", "<0x0A>"): for checking.
  virtual std::string piece(std::int64_t id) const = 0;
};

// Opens a tokenizer file (throws std::exception, one line naming the file, when it is not one).
using TokenizerOpener = std::function<std::unique_ptr<Tokenizer>(const std::string& path)>;

// Called before any work (beside the option check): throws std::exception with one line when
// the data set cannot be read at query.path() ("'/data/x' does not exist or is not a folder"),
// so a run stops before it makes its folder.
using DatasetPathCheck = std::function<void(const DatasetQuery& query, const Options& options)>;

// Implemented by the host: the batch a model will get (model.h), per sample.
class BatchDescription {
 public:
  virtual ~BatchDescription() = default;
  // The fields, "input" first; then the data set's own ("input_lengths", ...).
  virtual std::vector<std::string> fields() const = 0;
  virtual bool has(const std::string& field) const = 0;
  // The dtype the model gets it in (images: float32 after normalisation; token ids: int64).
  virtual c10::ScalarType dtype(const std::string& field) const = 0;
  // Per sample; a dimension that varies in length is given at its largest.
  virtual std::vector<std::int64_t> shape(const std::string& field) const = 0;
  // The field holding the real lengths of `field`'s first dimension when it varies from sample
  // to sample ("input_lengths" for "input"), or "" when it does not vary.
  virtual std::string lengths_field(const std::string& field) const = 0;
};

// Implemented by the host: what the data set's targets are, for a model (model.h) and a task
// (task.h).
class TargetDescription {
 public:
  virtual ~TargetDescription() = default;
  virtual DatasetTargets kind() const = 0;
  // Classes, labels, vocabulary size or channels of the targets (0 for real values).
  virtual std::int64_t classes() const = 0;
  // A target's shape per sample: {} for a class, {K}, {D}, {H, W} or {S} for a sequence.
  virtual std::vector<std::int64_t> shape() const = 0;
  virtual std::vector<std::string> class_names() const = 0;
  // The size of the model's last dimension of "output" that the run's task needs: classes for
  // classification, classes + 1 (the blank) for a CTC sequence, D for regression. A task's
  // factory is asked before this is known and sees 0.
  virtual std::int64_t model_outputs() const = 0;
};

// ---- the plugin's answers ----

// One split as a reader gives it: in memory, or decoded on demand (inputs undefined; `decode`
// and `sample_shape` set, `count` samples).
struct DatasetReadSplit {
  at::Tensor inputs;
  SampleDecoder decode;
  std::vector<std::int64_t> sample_shape;
  std::int64_t count = 0;  // samples of a decoded split (0: the targets' rows)
  at::Tensor targets;
  std::map<std::string, at::Tensor> fields;  // per-sample tensors by name
};

// What a read gives. A split in memory has inputs uint8 or float32 (N, C, H, W) (or a model's
// own layout: token ids int64 (N, T)) and targets N rows of the data set's kind; test targets
// may be undefined (a test split without labels: the host then evaluates the validation split
// at the end, and says so). A split decoded on demand (images that do not fit, data.cache =
// "none") has `count` samples of uint8 `sample_shape` (C, H, W). A field is a per-sample tensor
// beside the inputs, N rows, named as the spec declared it; it reaches the model in its batch
// under that name ("input_lengths": int64 (N), the real steps of a padded input).
struct DatasetRead {
  DatasetReadSplit train, test, validation;  // validation: for a spec with validation_split only
  std::optional<DatasetTargets> targets;  // unset: the spec's kind; for as_task, the task's
  std::int64_t num_classes = 0;           // classes or labels
  std::vector<std::string> class_names;   // may be empty
  std::string source;                     // for the log: "cifar10 from /data/cifar-10-binary.tar.gz"
  std::string test_split = "test";        // the split evaluated on, for the log ("val" for an image folder)
  std::vector<std::string> notes;         // decoding speed, images skipped, the cache
  // The tokenizer file the token ids came from ("" for none). The host keeps a copy with the
  // run, checks on a resume that it is the same file, and opens it with the spec's `tokenizer`
  // for `generate` and `tokenize`.
  std::string tokenizer_file;
};

// Reads the data set (throws std::exception with one line naming the file and the cause).
using DatasetReader = std::function<DatasetRead(const DatasetQuery& query, const Options& options)>;

// The plugin's description of one data set; Registrar::add_dataset registers it.
struct DatasetSpec {
  std::string name;  // data.dataset
  std::string description;
  DatasetTargets targets = DatasetTargets::class_index;
  std::vector<OptionSpec> options;  // the [dataset] table
  DatasetReader read;
  DatasetPathCheck check = {};                 // may be empty
  std::vector<std::string> fields = {};        // the per-sample fields every read gives ("input_lengths")
  // The data set has its own validation split of this name (TinyImageNet's "val", a corpus's
  // "dev"), which chooses the model: monitors, early stopping and best checkpoints read its val_
  // metrics, and the test split is evaluated at the end. Every read then gives it.
  std::string validation_split = {};
  TokenizerOpener tokenizer = {};      // opens the files DatasetRead::tokenizer_file names
  std::vector<OptionRule> rules = {};  // what its option values may be (options.h)
};

}  // namespace plugtrain
