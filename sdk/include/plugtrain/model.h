// plugtrain SDK — model plugins register architectures by name.
//
// A models plugin exports one function, void register_models(plugtrain::ModelRegistry&),
// with PLUGTRAIN_MODELS_PLUGIN. Each architecture has a name, a one-line description, an
// option schema (checked against the experiment's [model] table before anything is built)
// and a factory. Parameter names are the state_dict keys users see in checkpoints, so
// name submodules as the equivalent Python module would.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <boost/dll/alias.hpp>
#include <torch/nn/module.h>
#include <torch/types.h>
#include <torch/version.h>

#include "plugtrain/abi.h"
#include "plugtrain/dataset.h"
#include "plugtrain/options.h"

namespace plugtrain {

// Tensors by name: a batch's fields, a model's outputs (SDK 3.6).
using TensorMap = std::map<std::string, torch::Tensor>;

// A trainable network: one tensor in (N, C, H, W), logits (N, classes) out.
class Model : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(torch::Tensor input) = 0;

  // SDK 3.6: the batch as named tensors in, named outputs out, for data sets whose samples have
  // fields beyond the input (dataset.h, DatasetFields). The batch holds "input" and the data
  // set's fields ("input_lengths": int64 (N), the real steps of a padded variable-length input);
  // the outputs hold "output" (what forward gives) and may hold "output_lengths": int64 (N), the
  // real steps of per-step scores, which the sequence task's CTC loss and decoding then use.
  // The default reads the input alone. The host calls this only for a batch that has fields, and
  // only on models of 3.6 plugins (an older plugin's Model has no such call).
  virtual TensorMap forward_fields(const TensorMap& batch) { return {{"output", forward(batch.at("input"))}}; }
};

// What the dataset tells the model. Crosses by reference: frozen since 3.0, like ModelSpec and
// the option types of options.h (docs/plugins.md, "Versioning rules"). What the host adds to
// ModelRegistry is appended at its end, under a name of its own.
struct ModelInputs {
  std::vector<std::int64_t> input_shape;  // per sample, e.g. {1, 28, 28}
  std::int64_t num_classes = 0;
};

using ModelFactory =
    std::function<std::shared_ptr<Model>(const ModelInputs& inputs, const Options& options)>;

struct ModelSpec {
  std::string name;
  std::string description;
  std::vector<OptionSpec> options;
  ModelFactory factory;
};

class ModelRegistry {
 public:
  virtual ~ModelRegistry() = default;
  virtual void add(ModelSpec spec) = 0;
  // SDK 3.2: the same, with rules for the option values (options.h). A rule naming no option
  // of the spec makes the plugin fail to load, with that reason. (The host implements it; the
  // default only lets a plugin's own test registry leave it out.)
  virtual void add(ModelSpec spec, std::vector<OptionRule> rules) {
    (void)rules;
    add(std::move(spec));
  }
  // SDK 3.6: the kinds of target whose tasks the model's outputs fit, for a model added before:
  // class_index for (N, classes) logits, pixel_class for (N, classes, H, W), sequence for
  // (N, T, classes + 1) scores, ... A run whose task learns another kind is refused before any
  // work, naming both. A model that declares nothing serves every task its output shape fits.
  virtual void declare_targets(const std::string& model, std::vector<DatasetTargets> targets) {
    (void)model;
    (void)targets;
  }
};

}  // namespace plugtrain

// PLUGTRAIN_MODELS_PLUGIN(register_fn, "name", "1.0.0", "one line")
// register_fn: void(plugtrain::ModelRegistry&). Use once, at global scope.
#define PLUGTRAIN_MODELS_PLUGIN(REGISTER_FN, NAME, VERSION, DESCRIPTION)      \
  PLUGTRAIN_PLUGIN_INFO(PLUGTRAIN_KIND_MODELS, NAME, VERSION, DESCRIPTION)    \
  BOOST_DLL_ALIAS(REGISTER_FN, plugtrain_register_models)
