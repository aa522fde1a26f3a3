// plugtrain SDK 4 — data sets from plugins.
//
// A plugin registers data sets by name, each with an option schema (the experiment's [dataset]
// table, checked before any work like a model's options) and a reader: given what the experiment
// says (DatasetQuery), it gives its splits to a DatasetSink, in memory or decoded on demand, with
// named per-sample fields and its own validation split where it has them. The host treats every
// data set alike (the bundled ones are the `datasets` plugin's): normalisation from the training
// split's statistics, augmentation, the batch loader, data kept on the device.
//
// DatasetQuery, DatasetSink and DatasetBuilder are implemented by the host (calls only appended).
// DatasetSpec and DatasetRead are the plugin's own: add_dataset() and write() turn
// them into calls.
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

// What one sample's target is; the run's [task] must learn this kind (`plugtrain tasks`).
// Crosses as its integer; values are only appended.
enum class DatasetTargets {
  class_index = 0,  // int64 (N): one class per sample (task classification)
  multi_hot = 1,    // float (N, K): 1 for each of the K labels that applies (multilabel)
  real = 2,         // float (N) or (N, D): values to predict (regression)
  pixel_class = 3,  // int64 (N, H, W): a class per pixel (segmentation)
  sequence = 4,     // int64 (N, S): classes in order, padded at the end with -1 (sequence)
  as_task = 5,      // the data set makes the kind the run's task learns (synthetic data):
                    // DatasetQuery::task_targets says which, DatasetSink::targets says it back
  next_token = 6,   // int64 (N, T): the token that follows each position of the input window
                    // (language_model); inputs are int64 (N, T) token ids. A host before it
                    // refuses the read, naming the unknown kind
};

// Implemented by the host: what the experiment says about reading. Calls only appended.
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

// Implemented by the host: what a read gives. Splits are "train", "test" and, for a data set
// that declared one (DatasetBuilder::validation_split), its own validation split. Calls only appended.
class DatasetSink {
 public:
  virtual ~DatasetSink() = default;
  // A split in memory: inputs uint8 or float32 (N, C, H, W) (or a model's own layout: token ids
  // int64 (N, T)), targets N rows of the data set's kind. Test targets may be undefined (a test
  // split without labels): the host then evaluates the validation split at the end, and says so.
  virtual void split(const std::string& split, const at::Tensor& inputs, const at::Tensor& targets) = 0;
  // A split decoded on demand (images that do not fit, data.cache = "none"): `count` samples of
  // uint8 `sample_shape` (C, H, W).
  virtual void decoded_split(const std::string& split, std::int64_t count, const std::vector<std::int64_t>& sample_shape,
                             SampleDecoder decode, const at::Tensor& targets) = 0;
  // A per-sample tensor beside a split's inputs, N rows, named as the data set declared it; it
  // reaches the model in its batch under that name ("input_lengths": int64 (N), the real steps
  // of a padded variable-length input).
  virtual void field(const std::string& split, const std::string& name, const at::Tensor& values) = 0;
  virtual void targets(DatasetTargets kind) = 0;  // for as_task: the kind it made
  virtual void classes(std::int64_t count, const std::vector<std::string>& names) = 0;  // classes or labels; names may be empty
  virtual void source(const std::string& line) = 0;      // for the log: "cifar10 from /data/cifar-10-binary.tar.gz"
  virtual void test_split_name(const std::string& name) = 0;  // the split evaluated on, for the log ("val" for an image folder)
  virtual void note(const std::string& line) = 0;        // decoding speed, images skipped, the cache
  // SDK 4.2: the tokenizer file the token ids came from (a language model's data set). The host
  // keeps a copy with the run, checks on a resume that it is the same file, and opens it with the
  // data set's TokenizerOpener for `generate` and `tokenize`.
  virtual void tokenizer_file(const std::string& path) = 0;
};

// Implemented by the plugin: a tokenizer read from its file. Never changes within SDK 4.
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

// Reads the data set (throws std::exception with one line naming the file and the cause).
using DatasetReader = std::function<void(const DatasetQuery& query, const Options& options, DatasetSink& out)>;
// Called before any work (beside the option check): throws std::exception with one line when
// the data set cannot be read at query.path() ("'/data/x' does not exist or is not a folder"),
// so a run stops before it makes its folder.
using DatasetPathCheck = std::function<void(const DatasetQuery& query, const Options& options)>;

// Implemented by the host. Calls only appended.
class DatasetBuilder {
 public:
  virtual ~DatasetBuilder() = default;
  virtual void description(const std::string& line) = 0;
  virtual void targets(DatasetTargets kind) = 0;
  virtual OptionsBuilder& options() = 0;  // the [dataset] table
  virtual void reader(DatasetReader read) = 0;
  virtual void path_check(DatasetPathCheck check) = 0;
  // The per-sample fields every read gives beside inputs and targets ("input_lengths").
  virtual void fields(const std::vector<std::string>& names) = 0;
  // The data set has its own validation split of this name (TinyImageNet's "val", a corpus's
  // "dev"), which chooses the model: monitors, early stopping and best checkpoints read its val_
  // metrics, and the test split is evaluated at the end. Every read then gives it.
  virtual void validation_split(const std::string& name) = 0;
  // SDK 4.2: how the data set's tokenizer files are opened (a language model's data set).
  virtual void tokenizer_opener(TokenizerOpener open) = 0;
};

// Implemented by the host: the batch a model will get (model.h), per sample. Calls only appended.
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
// (task.h). Calls only appended.
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

// ---- the plugin's own values, and the inline functions that turn them into calls ----

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

struct DatasetRead {
  DatasetReadSplit train, test, validation;  // validation: for a spec with validation_split only
  std::optional<DatasetTargets> targets;  // unset: the spec's kind; for as_task, the task's
  std::int64_t num_classes = 0;
  std::vector<std::string> class_names;
  std::string source;
  std::string test_split = "test";
  std::vector<std::string> notes;
  std::string tokenizer_file;  // SDK 4.2: the tokenizer the ids came from ("" for none)
};

inline void write_split(DatasetSink& out, const std::string& name, const DatasetReadSplit& s) {
  if (!s.inputs.defined() && !s.decode) return;  // a split the read left empty: nothing to give
  if (s.inputs.defined()) {
    out.split(name, s.inputs, s.targets);
  } else {
    const std::int64_t count = s.count > 0 ? s.count : (s.targets.defined() ? s.targets.size(0) : 0);
    out.decoded_split(name, count, s.sample_shape, s.decode, s.targets);
  }
  for (const auto& [field, values] : s.fields) out.field(name, field, values);
}

inline void write(DatasetSink& out, const DatasetRead& read, const std::string& validation_split = "") {
  if (read.targets) out.targets(*read.targets);
  out.classes(read.num_classes, read.class_names);
  write_split(out, "train", read.train);
  write_split(out, "test", read.test);
  if (!validation_split.empty()) write_split(out, validation_split, read.validation);
  out.source(read.source);
  out.test_split_name(read.test_split);
  for (const std::string& note : read.notes) out.note(note);
  if (!read.tokenizer_file.empty()) out.tokenizer_file(read.tokenizer_file);
}

// The plugin's description of one data set; add_dataset() registers it.
struct DatasetSpec {
  std::string name;  // data.dataset
  std::string description;
  DatasetTargets targets = DatasetTargets::class_index;
  std::vector<OptionSpec> options;  // the [dataset] table
  std::function<DatasetRead(const DatasetQuery& query, const Options& options)> read;
  DatasetPathCheck check = {};                 // may be empty
  std::vector<std::string> fields = {};        // the per-sample fields every read gives
  std::string validation_split = {};           // non-empty: every read gives DatasetRead::validation
  TokenizerOpener tokenizer = {};              // SDK 4.2: opens the files DatasetRead::tokenizer_file names
};

inline void add_dataset(Registrar& host, const DatasetSpec& spec, const std::vector<OptionRule>& rules = {}) {
  DatasetBuilder& dataset = host.add_dataset(spec.name);
  dataset.description(spec.description);
  dataset.targets(spec.targets);
  add_options(dataset.options(), spec.options, rules);
  if (!spec.fields.empty()) dataset.fields(spec.fields);
  if (!spec.validation_split.empty()) dataset.validation_split(spec.validation_split);
  if (spec.check) dataset.path_check(spec.check);
  if (spec.tokenizer) dataset.tokenizer_opener(spec.tokenizer);
  if (spec.read)
    dataset.reader([read = spec.read, validation = spec.validation_split](const DatasetQuery& query, const Options& options,
                                                                          DatasetSink& out) {
      write(out, read(query, options), validation);
    });
}

}  // namespace plugtrain
