// plugtrain SDK 3.5 — data sets from plugins (3.6: named fields; 3.7: readers; 3.8: a validation split).
//
// A plugin registers data sets by name, each with an option schema (the experiment's [dataset]
// table, checked before any work like a model's options) and a factory that reads both splits
// into memory, or (3.7) a reader that honours the [data] table's reading settings and may decode
// images on demand. The host treats every data set alike (the bundled ones are the `datasets`
// plugin's readers): normalisation from the training split's statistics, augmentation, the batch
// loader, data kept on the device.
//
// A data-sets plugin exports them with PLUGTRAIN_DATASETS_PLUGIN; a models plugin may add its
// own with PLUGTRAIN_DATASETS beside PLUGTRAIN_MODELS_PLUGIN (both at the end of this file). DatasetSplit, LoadedDataset, DatasetRequest and DatasetSpec cross the
// boundary by value: frozen since 3.5 (docs/plugins.md, "Versioning rules").
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <boost/dll/alias.hpp>
#include <ATen/core/Tensor.h>  // the Tensor type alone: not all of ATen (torch/types.h) for every plugin file
#include <torch/version.h>

#include "plugtrain/abi.h"
#include "plugtrain/options.h"

namespace plugtrain {

// What one sample's target is; the run's [task] must learn this kind (`plugtrain tasks`).
// Crosses as its integer; values are only appended.
enum class DatasetTargets {
  class_index = 0,  // int64 (N): one class per sample (task classification)
  multi_hot = 1,    // float (N, K): 1 for each of the K labels that applies (multilabel)
  real = 2,         // float (N) or (N, D): values to predict (regression)
  pixel_class = 3,  // int64 (N, H, W): a class per pixel (segmentation)
  sequence = 4,     // int64 (N, S): classes in order, padded at the end with -1 (sequence)
  // SDK 3.7: the data set makes the kind the run's task learns (synthetic data): a reader
  // (add_reader) sees it in DatasetReadSettings::task_targets and says it in DatasetRead::targets.
  as_task = 5,
};

struct DatasetSplit {
  at::Tensor inputs;   // uint8 (N, C, H, W) pixels, or float32 (N, C, H, W) already normalised
  at::Tensor targets;  // N rows of the spec's DatasetTargets kind
};

struct LoadedDataset {
  DatasetSplit train, test;
  std::int64_t num_classes = 0;          // classes, or labels for multi_hot (0 for real values)
  std::vector<std::string> class_names;  // empty, or one per class
  std::string source;                    // for the log: "fashion-mnist strips from /usr/share/..."
};

// What the experiment says beyond the data set's own options.
struct DatasetRequest {
  std::string path;    // data.path
  std::uint64_t seed;  // experiment.seed, for data sets that draw at random
};

using DatasetFactory = std::function<LoadedDataset(const DatasetRequest& request, const Options& options)>;

struct DatasetSpec {
  std::string name;  // data.dataset
  std::string description;
  DatasetTargets targets = DatasetTargets::class_index;
  std::vector<OptionSpec> options;  // the [dataset] table
  DatasetFactory factory;           // throws std::exception with one line naming the file and cause
};

// SDK 3.6: per-sample tensors beside a split's inputs and targets, by name, each with N rows;
// they reach the model in its batch under the same name (model.h, Model::forward_fields). The
// host knows "input_lengths": int64 (N), how many of a variable-length input's steps are real
// (a clip of frames padded to the longest: the steps after it are padding). Frozen since 3.6.
struct DatasetFields {
  std::map<std::string, at::Tensor> train, test;
};

// SDK 3.6: a factory that also fills `fields`.
using DatasetFieldsFactory =
    std::function<LoadedDataset(const DatasetRequest& request, const Options& options, DatasetFields& fields)>;

// SDK 3.7: readers. What the [data] table says about reading, beyond DatasetRequest: the
// host's settings any reader of images may honour. Frozen since 3.7.
struct DatasetReadSettings {
  std::int64_t image_size = 0;  // data.image_size: the side images are decoded to (0: the reader's own)
  int cache = -1;               // data.cache: -1 "auto" (in memory when it fits), 0 "none" (decode every epoch), 1 "memory"
  int decode_threads = 0;       // threads that decode a cache (0: every core)
  bool skip_bad = false;        // data.skip_bad: skip undecodable images (and say so in the notes)
  DatasetTargets task_targets = DatasetTargets::class_index;  // the kind the run's task learns
};

// SDK 3.7: decodes sample `index` into `pixels` (uint8 C, H, W of the split's sample_shape).
// The loader calls it from several threads at once: it must be thread-safe. Throws
// std::exception with one line naming the file.
using SampleDecoder = std::function<void(std::int64_t index, std::uint8_t* pixels)>;

// SDK 3.7: one split as a reader gives it: in memory as DatasetSplit, or decoded on demand
// (inputs undefined; `decode` and `sample_shape` set) when the images do not fit or
// data.cache = "none". Frozen since 3.7.
struct DatasetReadSplit {
  at::Tensor inputs;  // uint8 or float32 (N, C, H, W), or undefined: `decode` gives the pixels
  SampleDecoder decode;
  std::vector<std::int64_t> sample_shape;  // C, H, W of one sample (read when inputs are undefined)
  at::Tensor targets;                   // N rows of the kind `DatasetRead::targets` says
};

// SDK 3.7: what a reader gives. Frozen since 3.7.
struct DatasetRead {
  DatasetReadSplit train, test;
  DatasetTargets targets = DatasetTargets::class_index;  // the spec's kind; for as_task, the task's
  std::int64_t num_classes = 0;
  std::vector<std::string> class_names;
  std::string source;                // for the log: "cifar10 from /data/cifar-10-binary.tar.gz"
  std::string test_split = "test";   // the split evaluated on, for the log ("val" for an image folder)
  std::vector<std::string> notes;    // lines for the log: decoding speed, images skipped, the cache
};

using DatasetReader =
    std::function<DatasetRead(const DatasetRequest& request, const DatasetReadSettings& settings, const Options& options)>;
// SDK 3.7: called before any work (beside the option check): throws std::exception with one
// line when the data set cannot be read at request.path ("'/data/x' does not exist or is not a
// folder"), so a run stops before it makes its folder. May be empty.
using DatasetPathCheck = std::function<void(const DatasetRequest& request, const Options& options)>;

// SDK 3.8: the data set's own validation split (TinyImageNet's val, a corpus's dev set), which
// chooses the model: monitors, early stopping and best checkpoints read its val_ metrics, and the
// test split is evaluated at the end. A data set whose test split has no labels (TinyImageNet's)
// leaves DatasetRead::test without targets: the host then evaluates `val` at the end too, and
// says so. Frozen since 3.8.
struct DatasetValidation {
  DatasetReadSplit val;      // as a reader's other splits: inputs in memory or `decode`, and targets
  std::string split = "val";  // its name, for the log ("dev")
};

// SDK 3.8: a reader (3.7) that also fills `validation`.
using DatasetValidationReader = std::function<DatasetRead(const DatasetRequest& request, const DatasetReadSettings& settings,
                                                          const Options& options, DatasetValidation& validation)>;

// Implemented by the host; a plugin's register function calls it.
class DatasetRegistry {
 public:
  virtual ~DatasetRegistry() = default;
  // Rules as for models (options.h); a rule naming no option makes the plugin fail to load.
  virtual void add(DatasetSpec spec, std::vector<OptionRule> rules) = 0;
  // SDK 3.6: a data set whose samples have named fields (DatasetFields); spec.factory is not
  // used. A run trains it only with a model of a 3.6 plugin (one that reads the fields).
  virtual void add_with_fields(DatasetSpec spec, std::vector<OptionRule> rules, DatasetFieldsFactory factory) {
    (void)spec;
    (void)rules;
    (void)factory;
  }
  // SDK 3.7: a data set read with the [data] table's settings, whose images may be decoded on
  // demand (DatasetRead); spec.factory is not used. The bundled data sets (fashion-mnist, cifar10,
  // image-folder, synthetic…) are registered this way.
  virtual void add_reader(DatasetSpec spec, std::vector<OptionRule> rules, DatasetReader reader, DatasetPathCheck check) {
    (void)spec;
    (void)rules;
    (void)reader;
    (void)check;
  }
  // SDK 3.8: a reader whose data set has its own validation split (DatasetValidation); every
  // read must fill it. spec.factory is not used. The bundled tiny-imagenet is registered this way.
  virtual void add_reader_with_validation(DatasetSpec spec, std::vector<OptionRule> rules, DatasetValidationReader reader,
                                          DatasetPathCheck check) {
    (void)spec;
    (void)rules;
    (void)reader;
    (void)check;
  }
};

}  // namespace plugtrain

// register_fn: void(plugtrain::DatasetRegistry&). Use one of these once, at global scope:
// PLUGTRAIN_DATASETS(register_fn) in a models plugin, beside PLUGTRAIN_MODELS_PLUGIN;
// PLUGTRAIN_DATASETS_PLUGIN(register_fn, "name", "1.0.0", "one line") for a data-sets plugin.
#define PLUGTRAIN_DATASETS(REGISTER_FN) BOOST_DLL_ALIAS(REGISTER_FN, plugtrain_register_datasets)
#define PLUGTRAIN_DATASETS_PLUGIN(REGISTER_FN, NAME, VERSION, DESCRIPTION)    \
  PLUGTRAIN_PLUGIN_INFO(PLUGTRAIN_KIND_DATASETS, NAME, VERSION, DESCRIPTION) \
  PLUGTRAIN_DATASETS(REGISTER_FN)
