// plugtrain SDK 5 — optional: a model's units (the extension "plugtrain.units", version 1).
//
// A unit is a block of the model that runs as a whole: a transformer block, a residual block.
// Sharded training (backend.strategy = "fsdp") keeps each unit's parameters in shards and
// gathers a unit just before its forward and its backward, freeing it after; activation
// checkpointing (train.activation_checkpointing = "blocks") keeps only a unit's input and runs it
// again in backward. A model declares its units by answering this extension and by passing each
// unit's forward through `Units::run`; a model without it is one unit (sharded training still
// shards its gradients and optimizer state, and checkpointing is refused).
//
//   class MyModel : public plugtrain::TensorModel {
//     plugtrain::Units units_{{"blocks.0", "blocks.1"}};
//     torch::Tensor forward(torch::Tensor x) override {
//       for (std::size_t i = 0; i < blocks_.size(); ++i)
//         x = units_.run(i, x, [&](const torch::Tensor& in) { return blocks_[i]->forward(in); });
//       return head_->forward(x);
//     }
//     void* extension(const char* name, std::uint32_t version) override { return units_.extension(name, version); }
//   };
//
// A unit takes one tensor and gives one; parameters outside every unit (embeddings, a head)
// form the model's root unit. A unit's forward must not change its input in place, nor read a
// tensor that needs a gradient other than its input and its own parameters (a mask computed
// from the root's parameters): checkpointing's second backward would reach beyond the unit. A
// parameter registered in two places (a tied weight) stays in the root.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <torch/types.h>

#include "plugtrain/plugin.h"

namespace plugtrain {

inline constexpr const char* kUnitsExtension = "plugtrain.units";

using UnitForward = std::function<torch::Tensor(const torch::Tensor&)>;

// Implemented by the host: runs unit `unit`'s forward on `input` (gathering its parameters
// first, recomputing it in backward, ...).
class UnitRunner {
 public:
  virtual torch::Tensor run(std::size_t unit, const torch::Tensor& input, const UnitForward& forward) = 0;

 protected:
  ~UnitRunner() = default;
};

// Implemented by the plugin; Model::extension("plugtrain.units", 1) returns it.
class ModelUnits {
 public:
  // The units' module names as named_modules() gives them ("transformer.h.0"), in forward order.
  virtual std::vector<std::string> names() const = 0;
  // The host's runner, or null (the default: each unit's forward is called directly).
  virtual void set_runner(UnitRunner* runner) = 0;

 protected:
  ~ModelUnits() = default;
};

// The convenience a model keeps: its unit names, the runner, and the extension's answer.
class Units final : public ModelUnits {
 public:
  Units() = default;
  explicit Units(std::vector<std::string> names) : names_(std::move(names)) {}

  void add(std::string name) { names_.push_back(std::move(name)); }
  std::vector<std::string> names() const override { return names_; }
  void set_runner(UnitRunner* runner) override { runner_ = runner; }

  // Unit `unit`'s forward, through the host's runner when it set one.
  torch::Tensor run(std::size_t unit, const torch::Tensor& input, const UnitForward& forward) {
    return runner_ != nullptr ? runner_->run(unit, input, forward) : forward(input);
  }

  // For Model::extension: this object for "plugtrain.units" version 1, else null.
  void* extension(const char* name, std::uint32_t version) {
    return is_extension(name, version, kUnitsExtension, 1) ? static_cast<ModelUnits*>(this) : nullptr;
  }

 private:
  std::vector<std::string> names_;
  UnitRunner* runner_ = nullptr;
};

}  // namespace plugtrain
