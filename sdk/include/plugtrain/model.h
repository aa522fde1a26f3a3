// plugtrain SDK 5 — models: a network built from a description of its batch and its target.
//
// A model is built from what the host tells it (BatchDescription: each field of the batch it
// will get, with dtype and per-sample shape; TargetDescription: what it must predict) and its
// options (the experiment's [model] table, checked against the option schema before anything is
// built). It maps the batch's named tensors to named outputs (Model::forward_batch); "output" is
// what the task scores. TensorModel is the convenience for one tensor in, one out (image
// classifiers, the U-Net): forward(input) -> output.
//
// Parameter names are the state_dict keys users see in checkpoints, so name submodules as the
// equivalent Python module would.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <torch/types.h>

#include "plugtrain/dataset.h"
#include "plugtrain/options.h"
#include "plugtrain/plugin.h"

namespace plugtrain {

// Implemented by the plugin.
class Model : public torch::nn::Module {
 public:
  // The batch's fields in (BatchDescription's names), named outputs out: "output" always, and
  // "output_lengths" (int64 (N): the real steps of per-step scores) where they vary.
  virtual TensorMap forward_batch(const TensorMap& batch) = 0;
  // The optional parts a model offers by name and version, or null (the default). One today:
  // units.h's "plugtrain.units" (the blocks sharded training and checkpointing work on).
  virtual void* extension(const char* name, std::uint32_t version) {
    (void)name;
    (void)version;
    return nullptr;
  }
};

// One tensor in (the batch's "input"), one out ("output"): image classifiers and their kin.
// Override forward_batch too where a model reads more fields (TFNet-lite reads "input_lengths").
class TensorModel : public Model {
 public:
  virtual torch::Tensor forward(torch::Tensor input) = 0;
  TensorMap forward_batch(const TensorMap& batch) override { return {{"output", forward(batch.at("input"))}}; }
};

// ---- registering: the plugin's spec (Registrar::add_model) ----

using BatchModelFactory = std::function<std::shared_ptr<Model>(const BatchDescription& batch,
                                                               const TargetDescription& target, const Options& options)>;

// The convenience for image models: the input's per-sample shape and the outputs asked for.
struct ModelInputs {
  std::vector<std::int64_t> input_shape;  // e.g. {1, 28, 28}
  std::int64_t num_classes = 0;           // TargetDescription::model_outputs()
};
using ModelFactory = std::function<std::shared_ptr<Model>(const ModelInputs& inputs, const Options& options)>;

inline ModelInputs model_inputs(const BatchDescription& batch, const TargetDescription& target) {
  return {batch.shape("input"), target.model_outputs()};
}

// The plugin's description of one model; Registrar::add_model registers it.
struct ModelSpec {
  std::string name;
  std::string description;
  std::vector<OptionSpec> options;
  ModelFactory factory;                 // from ModelInputs (image models), or
  BatchModelFactory batch_factory = {};  // from the whole description (used when set)
  // The kinds of target whose tasks its outputs fit; empty: every task its output fits.
  std::vector<DatasetTargets> serves = {};
  std::vector<OptionRule> rules = {};  // what its option values may be (options.h)
};

}  // namespace plugtrain
