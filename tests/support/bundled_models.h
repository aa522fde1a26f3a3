// The bundled models plugin through the real plugin host, for the model tests: the host, a
// model's spec, building a model from its schema defaults plus overrides, the message a
// refused build gives, parameter counts and the eval-mode loss. Header-only; needs
// plugtrain_core and the plugins built beside the test binary.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include <torch/nn/functional/loss.h>

#include "data/model_description.h"
#include "plugins/model_forward.h"
#include "plugins/plugin_host.h"

namespace plugtrain::testing {

// The real plugins beside the test binary; PLUGTRAIN_PLUGIN_PATH is ignored. Plugins stay
// loaded until exit, so one host serves every test.
inline PluginHost& bundled_plugins() {
  static PluginHost h = [] {
    SearchOptions options;
    options.use_environment = false;
    return PluginHost(options);
  }();
  return h;
}

inline const ModelSpec& model_spec(const std::string& name) {
  const RegisteredModel* m = bundled_plugins().models().find(name);
  if (!m) throw std::runtime_error("model '" + name + "' is not registered");
  return m->spec;
}

// Model `name` for `inputs`, with its schema defaults except for `overrides`.
inline std::shared_ptr<Model> build_model(const std::string& name, const ModelInputs& inputs,
                                          const std::map<std::string, OptionValue>& overrides = {}) {
  const ModelSpec& s = model_spec(name);
  std::map<std::string, OptionValue> values;
  for (const auto& o : s.options) values[o.name] = o.default_value;
  for (const auto& [k, v] : overrides) values[k] = v;
  const ModelDescription description = image_model_description(inputs.input_shape, inputs.num_classes);
  return s.batch_factory(description.batch, description.target, Options(values));
}

// The std::invalid_argument message of build_model(name, inputs, overrides), or "" when it
// did not throw.
inline std::string model_build_error(const std::string& name, const ModelInputs& inputs,
                                     const std::map<std::string, OptionValue>& overrides = {}) {
  try {
    build_model(name, inputs, overrides);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

inline std::int64_t parameter_count(Model& m) {
  std::int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

// Cross-entropy of m on (x, y) in eval mode, without gradients.
inline double eval_loss(Model& m, const torch::Tensor& x, const torch::Tensor& y) {
  torch::NoGradGuard no_grad;
  m.eval();
  return torch::nn::functional::cross_entropy(forward_input(m, x), y).item<double>();
}

}  // namespace plugtrain::testing
