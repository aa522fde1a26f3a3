#include "describe/model_summary.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include "config/config_error.h"
#include "config/experiment_loader.h"
#include "config/suggest.h"
#include "config/toml_text.h"
#include "data/model_description.h"
#include "describe/forward_trace.h"
#include "plugins/model_forward.h"
#include "plugins/plugin_error.h"
#include "util/fatal_signals.h"
#include "util/format.h"
#include "util/text.h"

namespace plugtrain {

namespace {

// "torch::nn::Conv2dImpl" -> "Conv2d"; "plugtrain::models::(anonymous namespace)::X" -> "X".
std::string type_of(const torch::nn::Module& m) {
  std::string name = m.name();
  if (auto colons = name.rfind("::"); colons != std::string::npos) name = name.substr(colons + 2);
  if (name.size() > 4 && name.compare(name.size() - 4, 4, "Impl") == 0) name.resize(name.size() - 4);
  return name;
}

std::string count_or_dash(const LayerRow& r, std::int64_t value) {
  return r.repeated ? "(shared)" : with_thousands(value);
}

}  // namespace

std::string with_thousands(std::int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  for (int i = int(digits.size()) - 3; i > 0; i -= 3) digits.insert(std::size_t(i), ",");
  return (value < 0 ? "-" : "") + digits;
}

std::string short_count(std::int64_t value) {
  const double v = double(value);
  if (v >= 1e8) return fixed(v / 1e9, 2) + " G";
  if (v >= 1e5) return fixed(v / 1e6, 2) + " M";
  if (v >= 1e2) return fixed(v / 1e3, 2) + " K";
  return std::to_string(value);
}

const RegisteredModel& find_registered_model(const PluginHost& host, const std::string& name) {
  if (const RegisteredModel* m = host.models().find(name)) return *m;
  std::vector<std::string> names;
  for (const auto& m : host.models().all()) names.push_back(m.spec.name);
  std::string failures;
  for (const std::string& f : host.load_failures("models")) failures += "; " + f;
  throw ConfigError("unknown model '" + name + "'" + did_you_mean(name, names) + "; available: " +
                    join(names, ", ", "none (no models plugin loaded, see `plugtrain plugins`)") + failures);
}

std::vector<std::int64_t> parse_input_shape(const std::string& text) {
  std::vector<std::int64_t> shape;
  std::stringstream in(text);
  std::string part;
  bool ok = !text.empty() && text.back() != 'x';
  while (ok && std::getline(in, part, 'x')) {
    ok = !part.empty() && part.size() <= 9 && std::all_of(part.begin(), part.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    if (ok) shape.push_back(std::stoll(part));
    ok = ok && shape.back() > 0;
  }
  if (!ok || (shape.size() != 3 && shape.size() != 1))
    throw ConfigError("--input " + text + ": expected CxHxW, three positive integers (e.g. --input 3x32x32), or T, "
                      "the tokens of a language model's window (e.g. --input 64)");
  if (shape.size() == 1) return shape;
  if (double(shape[0]) * double(shape[1]) * double(shape[2]) > double(std::int64_t(1) << 26))
    throw ConfigError("--input " + text + ": more than 2^26 values per sample is too large for a summary");
  return shape;
}

Options resolve_option_assignments(const RegisteredModel& model, const std::vector<std::string>& assignments) {
  ExperimentFile file = parse_experiment_text("[model]\nname = " + toml_quoted(model.spec.name) + "\n", "--set");
  for (const std::string& a : assignments) {
    const std::size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ConfigError("--set " + a + ": expected option=value (e.g. --set width=2 or --set stem=\"cifar\")");
    // "model.stem=..." is accepted too: the key as an experiment names it.
    const std::string key = a.compare(0, 6, "model.") == 0 ? a.substr(6, eq - 6) : a.substr(0, eq);
    if (key == "name" || key == "init")
      throw ConfigError("--set " + a + ": model." + key + " is not an option of the model here (the model is NAME)");
    apply_override(file, "model." + key + a.substr(eq));
  }
  return resolve_model_options(file, model.spec, model.spec.rules);
}

namespace {

std::shared_ptr<Model> summarized_model(const RegisteredModel& model, const ModelInputs& inputs,
                                        const Options& options) {
  std::shared_ptr<Model> net;
  {
    const PluginCallScope scope(model.plugin, "building model");
    try {
      const ModelDescription description = inputs.input_shape.size() == 1
                                               ? token_model_description(inputs.input_shape[0], inputs.num_classes)
                                               : image_model_description(inputs.input_shape, inputs.num_classes);
      net = model.spec.batch_factory(description.batch, description.target, options);
    } catch (const std::invalid_argument& e) {
      throw ConfigError(first_line(e.what()));
    } catch (const std::exception& e) {
      throw PluginError(model.plugin, "building model threw: " + std::string(e.what()));
    }
  }
  if (!net) throw PluginError(model.plugin, "model factory for '" + model.spec.name + "' returned nothing");
  return net;
}

// Every module that owns parameters or buffers itself is a row, in named_modules order until the
// forward pass tells the real one; `trace` learns which tensors each owns.
std::vector<LayerRow> parameter_owners(const Model& net, ForwardTrace& trace) {
  std::vector<LayerRow> owners;
  for (const auto& item : net.named_modules()) {
    const torch::nn::Module& m = *item.value();
    const auto params = m.named_parameters(/*recurse=*/false);
    const auto buffers = m.named_buffers(/*recurse=*/false);
    if (params.is_empty() && buffers.is_empty()) continue;
    LayerRow row;
    row.name = item.key().empty() ? "(" + type_of(m) + ")" : item.key();
    row.type = type_of(m);
    for (const auto& p : params) row.parameters += p.value().numel();
    for (const auto* list : {&params, &buffers})
      for (const auto& t : *list) trace.own(t.value(), owners.size());
    owners.push_back(row);
  }
  return owners;
}

// One forward pass of a zero sample, watched by `trace`.
void trace_forward(const RegisteredModel& model, Model& net, const ModelInputs& inputs, ForwardTrace& trace) {
  net.eval();
  std::vector<std::int64_t> one = {1};
  one.insert(one.end(), inputs.input_shape.begin(), inputs.input_shape.end());
  const at::Tensor input = at::zeros(one, at::TensorOptions().dtype(one.size() == 2 ? at::kLong : at::kFloat));
  const PluginCallScope scope(model.plugin, "summary forward pass");
  at::NoGradGuard no_grad;
  const TraceScope watching(trace);
  try {
    forward_input(net, input);
  } catch (const std::exception& e) {
    throw PluginError(model.plugin, "the forward pass on a 1x" + shape_text(inputs.input_shape) +
                                        " input threw: " + first_line(e.what()));
  }
}

}  // namespace

ModelSummary summarize_model(const RegisteredModel& model, const ModelInputs& inputs, const Options& options) {
  ModelSummary s;
  s.model = model.spec.name;
  s.inputs = inputs;
  s.options = options;
  const std::shared_ptr<Model> net = summarized_model(model, inputs, options);
  ForwardTrace trace;
  std::vector<LayerRow> owners = parameter_owners(*net, trace);
  for (const auto& p : net->parameters()) {
    s.parameters += p.numel();
    if (p.requires_grad()) s.trainable_parameters += p.numel();
  }
  for (const auto& b : net->buffers()) s.buffer_elements += b.numel();
  trace_forward(model, *net, inputs, trace);
  if (!trace.traced) throw Error("tracing the forward pass: " + trace.traced.why_not());

  // The rows in the order the forward pass used them, then the owners it never reached.
  std::vector<bool> used(owners.size(), false);
  for (auto& [index, row] : trace.rows) {
    const LayerRow& o = owners[index];
    row.name = o.name;
    row.type = o.type;
    row.parameters = row.repeated ? 0 : o.parameters;
    used[index] = true;
    s.macs += row.macs;
    s.rows.push_back(std::move(row));
  }
  for (std::size_t i = 0; i < owners.size(); ++i)
    if (!used[i]) {
      owners[i].used = false;
      s.rows.push_back(owners[i]);
    }
  return s;
}

std::string summary_text(const ModelSummary& s) {
  std::vector<std::string> options;
  for (const auto& [k, v] : s.options.values()) options.push_back(k + "=" + toml_text(v));
  std::vector<std::vector<std::string>> table{{"Layer", "Type", "Output shape", "Parameters", "Mult-adds"}};
  for (const LayerRow& r : s.rows)
    table.push_back({r.name, r.type, r.used ? shape_text(r.output_shape) : "(not used)",
                     count_or_dash(r, r.parameters), with_thousands(r.macs)});
  std::vector<std::size_t> width(5, 0);
  for (const auto& line : table)
    for (std::size_t c = 0; c < 5; ++c) width[c] = std::max(width[c], line[c].size());
  std::ostringstream out;
  out << s.model << " on a 1x" << shape_text(s.inputs.input_shape) << " input, " << s.inputs.num_classes
      << " classes; options: " << join(options, ", ", "none") << "\n";
  std::string rule;
  for (std::size_t c = 0; c < 5; ++c) rule += std::string(width[c], '-') + (c < 4 ? "  " : "");
  for (std::size_t i = 0; i < table.size(); ++i) {
    const auto& line = table[i];
    for (std::size_t c = 0; c < 5; ++c) {
      const std::string pad(width[c] - line[c].size(), ' ');
      out << (c < 3 ? line[c] + pad : pad + line[c]) << (c < 4 ? "  " : "\n");
    }
    if (i == 0) out << rule << "\n";
  }
  out << rule << "\n";
  out << "Total parameters:         " << with_thousands(s.parameters) << "\n";
  out << "Trainable parameters:     " << with_thousands(s.trainable_parameters) << "\n";
  out << "Non-trainable parameters: " << with_thousands(s.parameters - s.trainable_parameters) << "\n";
  out << "Size (float32):           " << fixed(s.size_mib(), 2) << " MiB (parameters and " << with_thousands(s.buffer_elements)
      << " buffer elements)\n";
  out << "Multiply-adds per sample: " << short_count(s.macs) << " (" << with_thousands(s.macs) << ")\n";
  return out.str();
}

nlohmann::json summary_json(const ModelSummary& s) {
  nlohmann::json options = nlohmann::json::object();
  for (const auto& [k, v] : s.options.values())
    std::visit([&, key = k](const auto& x) { options[key] = x; }, v);
  nlohmann::json rows = nlohmann::json::array();
  for (const LayerRow& r : s.rows)
    rows.push_back({{"name", r.name},
                    {"type", r.type},
                    {"output_shape", r.used ? nlohmann::json(r.output_shape) : nlohmann::json(nullptr)},
                    {"parameters", r.parameters},
                    {"macs", r.macs},
                    {"shared", r.repeated}});
  return {{"model", s.model},
          {"input_shape", s.inputs.input_shape},
          {"classes", s.inputs.num_classes},
          {"options", options},
          {"rows", rows},
          {"totals",
           {{"parameters", s.parameters},
            {"trainable_parameters", s.trainable_parameters},
            {"buffer_elements", s.buffer_elements},
            {"size_bytes", (s.parameters + s.buffer_elements) * 4},
            {"size_mib", s.size_mib()},
            {"macs", s.macs}}}};
}

}  // namespace plugtrain
