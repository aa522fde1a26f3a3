// `plugtrain models NAME --input CxHxW`: one architecture's layer table and totals, like
// torchinfo or Keras' summary(), so a person sees shapes, parameters and cost before a run.
//
// LibTorch's C++ modules have no forward hooks, so the rows come from ONE forward pass (eval
// mode, no_grad, a batch of 1 of zeros) watched through ATen's RecordFunction callbacks
// (describe/forward_trace.h; only observed: the numbers computed are untouched). An operator
// called with one of a module's own parameters or buffers as an input belongs to that module;
// the outermost such operator is the one seen (conv2d, not the convolution it calls). Its
// output gives the row's shape; consecutive operators of one module make one row. Multiply-adds
// are counted from shapes for convolution (output elements x Cin/groups x kH x kW; transposed:
// input elements x Cout/groups x kH x kW), linear (output elements x in_features) and
// addmm/mm/bmm/matmul (output elements x the inner dimension); every other operator (batch
// norm, activations, pooling, additions, and any operator on no parameter) counts 0.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plugins/plugin_host.h"
#include "plugtrain/model.h"

namespace plugtrain {

struct LayerRow {
  std::string name;                        // state_dict prefix, e.g. "layer1.0.conv1"
  std::string type;                        // e.g. "Conv2d"
  std::vector<std::int64_t> output_shape;  // per sample; empty: never used in the forward pass
  bool used = true;
  bool repeated = false;                   // a module called again later: its parameters counted once
  std::int64_t parameters = 0;
  std::int64_t macs = 0;                   // multiply-adds per sample
};

struct ModelSummary {
  std::string model;
  ModelInputs inputs;
  Options options;
  std::vector<LayerRow> rows;
  std::int64_t parameters = 0;
  std::int64_t trainable_parameters = 0;
  std::int64_t buffer_elements = 0;
  std::int64_t macs = 0;  // sum of the rows
  double size_mib() const { return double(parameters + buffer_elements) * 4.0 / (1024.0 * 1024.0); }
};

// The registered model `name`, or a ConfigError (exit 2) naming the available ones.
const RegisteredModel& find_registered_model(const PluginHost& host, const std::string& name);

// "3x32x32" -> {3, 32, 32}; anything else (not three positive integers) is a ConfigError.
std::vector<std::int64_t> parse_input_shape(const std::string& text);

// The model's options from `option=value` assignments (a TOML value, as --set takes), checked
// exactly as the [model] table of an experiment is: same messages, defaults filled in.
Options resolve_option_assignments(const RegisteredModel& model, const std::vector<std::string>& assignments);

// Builds the model and traces one forward pass. A factory that refuses the inputs or options
// (std::invalid_argument) is a ConfigError; anything else the plugin throws a PluginError.
ModelSummary summarize_model(const RegisteredModel& model, const ModelInputs& inputs, const Options& options);

std::string summary_text(const ModelSummary& summary);
nlohmann::json summary_json(const ModelSummary& summary);

// 11173962 -> "11,173,962"; 556651520 -> "0.56 G" (K, M, G: the largest that keeps it >= 0.1).
std::string with_thousands(std::int64_t value);
std::string short_count(std::int64_t value);

}  // namespace plugtrain
