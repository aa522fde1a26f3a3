#include "config/experiment_loader.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "config/config_error.h"
#include "config/experiment_schema.h"
#include "config/optimizer_table.h"
#include "config/option_rules.h"
#include "config/suggest.h"
#include "config/toml_values.h"
#include "plugtrain/model.h"
#include "util/text.h"

namespace plugtrain {

namespace fs = std::filesystem;

namespace {

// Sets dotted `path` in `table` to a copy of `value`, creating tables on the way.
void assign_path(toml::table& table, const std::string& path, const toml::node& value) {
  toml::table* current = &table;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (part.empty()) throw ConfigError("--set " + path + ": empty key component");
    if (dot == std::string::npos) {
      value.visit([&](const auto& v) { current->insert_or_assign(part, v); });
      return;
    }
    toml::node* next = current->get(part);
    if (!next) next = &current->insert_or_assign(part, toml::table{}).first->second;
    if (!next->is_table())
      throw ConfigError("--set " + path + ": '" + part + "' is a " + type_name(*next) + ", not a table");
    current = next->as_table();
    start = dot + 1;
  }
}

// [backend] force_<name> = true: the same as naming <name> in backend.force (the M1/M2 guide
// writes force_mps = true).
std::optional<std::string> forced_backend_key(const std::string& table, const std::string& key) {
  if (table != "backend" || key.rfind("force_", 0) != 0 || key.size() == 6) return std::nullopt;
  return key.substr(6);
}

std::vector<std::string> keys_of_table(const std::string& table) {
  std::vector<std::string> keys;
  for (const auto& k : experiment_schema())
    if (k.path.compare(0, table.size() + 1, table + ".") == 0) keys.push_back(k.path.substr(table.size() + 1));
  return keys;
}

}  // namespace


std::string key_location(const ExperimentFile& file, const std::string& key_path) {
  const toml::node* node = file.table.at_path(key_path).node();
  return where(file, key_path, node ? node->source() : toml::source_region{});
}

ExperimentFile parse_experiment_file(const std::filesystem::path& path) {
  ExperimentFile file;
  file.source = path.string();
  // Only a regular file: a folder, a FIFO (which would block) or /dev/zero (which never ends)
  // is refused before it is opened.
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) throw ConfigError(file.source + ": no such experiment file");
  if (fs::is_directory(status)) throw ConfigError(file.source + ": is a folder, not an experiment file");
  if (!fs::is_regular_file(status)) throw ConfigError(file.source + ": is not a regular file (a device, FIFO or socket)");
  constexpr std::uintmax_t kMaxBytes = 16u << 20;  // a TOML experiment is a few KB
  if (fs::file_size(path, ec) > kMaxBytes)
    throw ConfigError(file.source + ": " + std::to_string(fs::file_size(path, ec)) +
                      " bytes is too large for an experiment file (at most 16 MiB)");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw ConfigError(file.source + ": cannot open the experiment file: " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  return parse_experiment_text(text.str(), file.source);
}

ExperimentFile parse_experiment_text(const std::string& text, const std::string& source) {
  ExperimentFile file;
  file.source = source;
  try {
    file.table = toml::parse(text, file.source);
  } catch (const toml::parse_error& e) {
    throw ConfigError(position(file.source, e.source()) + ": TOML syntax error: " + std::string(e.description()));
  }
  return file;
}

void apply_override(ExperimentFile& file, const std::string& assignment) {
  const std::size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError("--set " + assignment + ": expected key.path=value (e.g. --set optim.lr=0.01)");
  const std::string path = assignment.substr(0, eq);
  const std::string value = assignment.substr(eq + 1);
  if (path.find('.') == std::string::npos)
    throw ConfigError("--set " + assignment + ": the key needs its table, e.g. optim.lr");
  toml::table parsed;
  try {
    parsed = toml::parse("v = " + value);
  } catch (const toml::parse_error& e) {
    // A bare word is taken as a string, but a number TOML cannot hold (beyond 64 bits) is an
    // error in its own words, not "must be an integer, got string".
    if (std::string(e.description()).find("not representable") != std::string::npos)
      throw ConfigError("--set " + path + ": " + value + " is not a valid number: " + std::string(e.description()));
    parsed = toml::table{};
    parsed.insert("v", value);
  }
  assign_path(file.table, path, *parsed.get("v"));
  file.overridden.insert(path);
}

namespace {

// Every table is one the schema knows, and every key of the tables the schema reads too (with a
// did-you-mean); [model], [task], [dataset] and [logging.<name>] hold the model's, the task's, a
// plugin data set's and a logger's options, checked later (run/validate); [sweep] is read by
// `plugtrain sweep`.
void check_tables_and_keys(const ExperimentFile& file) {
  const auto& tables = experiment_tables();
  for (auto&& [table_key, table_node] : file.table) {
    const std::string table_name(table_key.str());
    if (std::find(tables.begin(), tables.end(), table_name) == tables.end())
      throw ConfigError(where(file, table_name, table_key.source()) + ": unknown table [" + table_name + "]" +
                        did_you_mean(table_name, tables));
    const toml::table* table = table_node.as_table();
    if (!table)
      throw ConfigError(where(file, table_name, table_key.source()) + ": '" + table_name + "' must be a table ([" +
                        table_name + "]), not a " + type_name(table_node));
    if (table_name == "model" || table_name == "task" || table_name == "dataset" || table_name == "sweep") continue;
    const std::vector<std::string> known = keys_of_table(table_name);
    for (auto&& [key, node] : *table) {
      const std::string name(key.str());
      // [logging.<name>], or <name> = "uri": a logger's options (run/validate)
      if (table_name == "logging" && name != "loggers" && (node.is_table() || node.is_string())) continue;
      const std::string path = table_name + "." + name;
      if (auto backend = forced_backend_key(table_name, name)) {
        if (!node.is_boolean())
          throw ConfigError(where(file, path, key.source()) + ": " + path + " must be a boolean, got " + type_name(node));
        continue;
      }
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        const std::string guess = closest_match(name, known);
        throw ConfigError(where(file, path, key.source()) + ": unknown key '" + path + "'" +
                          (guess.empty() ? "" : " (did you mean '" + table_name + "." + guess + "'?)"));
      }
    }
  }
}

// Each schema key the file gives: converted to its type, checked, stored in `e`.
void read_schema_keys(const ExperimentFile& file, Experiment& e) {
  for (const ConfigKey& k : experiment_schema()) {
    const toml::node* node = file.table.at_path(k.path).node();
    if (!node) continue;
    const std::string at = where(file, k.path, node->source());
    std::optional<ConfigValue> value = convert(*node, k.type);
    if (!value)
      throw ConfigError(at + ": " + k.path + " must be " +
                        (std::string("aeiou").find(to_string(k.type)[0]) != std::string::npos ? "an " : "a ") +
                        to_string(k.type) + ", got " + type_name(*node));
    if (Status finite = all_finite(*value); !finite) throw ConfigError(at + ": " + k.path + " " + finite.why_not());
    if (k.check)
      if (Status passed = k.check(*value); !passed) throw ConfigError(at + ": " + k.path + " " + passed.why_not());
    k.store(e, *value);
  }
  if (const toml::table* backend = file.table["backend"].as_table())
    for (auto&& [key, node] : *backend)
      if (auto name = forced_backend_key("backend", std::string(key.str())))
        if (node.value_or(false) && std::find(e.backend.force.begin(), e.backend.force.end(), *name) == e.backend.force.end())
          e.backend.force.push_back(*name);
}

// What no single key's check can see: keys that contradict each other, and caps tied to this machine.
void check_key_combinations(const ExperimentFile& file, const Experiment& e) {
  if (e.model.name.empty())
    throw ConfigError(file.source + ": [model] name is required (see `plugtrain models`)");
  // Caps tied to this machine: beyond them a run only floods it.
  const std::int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  if (e.train.threads > 4 * cores)
    throw ConfigError(key_location(file, "train.threads") + ": train.threads = " + std::to_string(e.train.threads) +
                      " is more than 4 per core of this machine's " + std::to_string(cores));
  if (!e.data.batch_size && e.optim.lr_scaling != LrScaling::none && e.optim.lr_batch_size == 0)
    throw ConfigError(key_location(file, "optim.lr_scaling") + ": optim.lr_scaling = \"" + word_of(e.optim.lr_scaling) +
                      "\" with data.batch_size = \"auto\" needs optim.lr_batch_size, the batch optim.lr is meant for");
  if (!e.data.batch_size && e.data.global_batch_size > 0)
    throw ConfigError(key_location(file, "data.global_batch_size") +
                      ": data.global_batch_size and data.batch_size = \"auto\" both set the batch; give one");
  if (e.data.min_batch_size > e.data.max_batch_size)
    throw ConfigError(key_location(file, "data.min_batch_size") + ": data.min_batch_size " +
                      std::to_string(e.data.min_batch_size) + " is above data.max_batch_size " +
                      std::to_string(e.data.max_batch_size));
  if (e.optim.impl == OptimizerImpl::fused && !optimizer_row(e.optim.name).fused_kernel)
    throw ConfigError(key_location(file, "optim.impl") + ": optim.impl = \"fused\": ATen has no fused " +
                      word_of(e.optim.name) + " kernel (fused: " + join(optimizers_with_fused_kernel()) +
                      "); use \"foreach\" or \"auto\"");
  if (e.optim.nesterov && e.optim.momentum <= 0)
    throw ConfigError(where(file, "optim.nesterov", file.table.at_path("optim.nesterov").node()->source()) +
                      ": optim.nesterov needs optim.momentum > 0");
}

}  // namespace

Experiment resolve_experiment(const ExperimentFile& file) {
  Experiment e;
  e.source = file.source;
  check_tables_and_keys(file);
  read_schema_keys(file, e);
  check_key_combinations(file, e);
  return e;
}

Options resolve_table_options(const ExperimentFile& file, const std::string& table_name, const std::string& owner,
                              const std::vector<OptionSpec>& specs, const std::vector<OptionRule>& rules,
                              const std::vector<std::string>& own_keys) {
  std::map<std::string, OptionValue> values;
  for (const auto& o : specs) values[o.name] = o.default_value;
  const toml::table* table = file.table.at_path(table_name).as_table();  // "model", "logging.mlflow"
  if (!table) return Options(values);
  std::vector<std::string> names;
  for (const auto& o : specs) names.push_back(o.name);
  for (auto&& [key, node] : *table) {
    const std::string name(key.str());
    if (std::find(own_keys.begin(), own_keys.end(), name) != own_keys.end()) continue;  // plugtrain's own keys
    const std::string path = table_name + "." + name;
    const std::string at = where(file, path, key.source());
    auto option = std::find_if(specs.begin(), specs.end(), [&](const OptionSpec& o) { return o.name == name; });
    if (option == specs.end()) {
      throw ConfigError(at + ": " + owner + " has no option '" + name + "'" + did_you_mean(name, names) +
                        "; its options: " + join(names, ", ", "none"));
    }
    std::optional<ConfigValue> value = convert(node, config_type(option->type));
    if (!value)
      throw ConfigError(where(file, path, node.source()) + ": " + path + " must be a " + to_string(option->type) +
                        ", got " + type_name(node));
    values[name] = option_value(*value);
    for (const OptionRule& rule : rules)
      if (rule.option == name)
        if (Status kept = keeps_rule(rule, path, values[name]); !kept)
          throw ConfigError(where(file, path, node.source()) + ": " + kept.why_not());
  }
  return Options(values);
}

Options resolve_model_options(const ExperimentFile& file, const ModelSpec& spec, const std::vector<OptionRule>& rules) {
  return resolve_table_options(file, "model", "model '" + spec.name + "'", spec.options, rules, {"name", "init"});
}

}  // namespace plugtrain
