#include "run/run_loggers.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <ostream>
#include <sstream>

#include <toml++/toml.h>
#include <nlohmann/json.hpp>

#include "checkpoint/checkpoint.h"
#include "config/config_error.h"
#include "config/suggest.h"
#include "util/error.h"
#include "util/text.h"

namespace plugtrain {

namespace {

const char* const kDefaultLogger = "tensorboard";

// A logger's table, or the key that named it: where a message about it points.
std::string logger_location(const ExperimentFile& file, const std::string& name) {
  if (file.table.at_path("logging." + name).node()) return key_location(file, "logging." + name);
  return key_location(file, "logging.loggers");
}

// Where a factory's refusal points: the key its message starts with ("logging.mlflow.uri: ..."),
// where the file has it; else the logger's table.
std::string refusal_location(const ExperimentFile& file, const std::string& name, const std::string& message) {
  const std::string prefix = "logging." + name + ".";
  const std::size_t colon = message.find(':');
  if (message.rfind(prefix, 0) == 0 && colon != std::string::npos) {
    const std::string key = message.substr(0, colon);
    if (file.table.at_path(key).node()) return key_location(file, key);
  }
  return logger_location(file, name);
}

// The names on, in order: the list, then each [logging.<name>] table (or `<name> = "uri"`), then
// MLFLOW_TRACKING_URI's mlflow.
std::vector<std::string> loggers_on(const ExperimentFile& file, const Experiment& e, const PluginHost& host) {
  std::vector<std::string> names;
  const bool listed = file.table.at_path("logging.loggers").node() != nullptr;
  for (const std::string& name : e.logging.loggers)
    if (listed || name != kDefaultLogger || host.loggers().find(name))  // the default needs its plugin
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  if (const toml::table* logging = file.table["logging"].as_table())
    for (auto&& [key, node] : *logging)
      if ((node.is_table() || node.is_string()) && key.str() != "loggers" &&
          std::find(names.begin(), names.end(), std::string(key.str())) == names.end())
        names.emplace_back(key.str());
  const char* uri = std::getenv("MLFLOW_TRACKING_URI");
  const std::string env_uri = uri ? uri : "";
  if ((env_uri.rfind("http://", 0) == 0 || env_uri.rfind("https://", 0) == 0) && host.loggers().find("mlflow") &&
      std::find(names.begin(), names.end(), "mlflow") == names.end())
    names.emplace_back("mlflow");
  return names;
}

// `[logging] mlflow = "http://host:5000"`: the one-line form of `[logging.mlflow] uri = "..."`,
// for a logger with a string option `uri`.
Options with_uri_shorthand(const ExperimentFile& file, const std::string& name, const RegisteredLogger& entry,
                           Options options) {
  const toml::node* node = file.table.at_path("logging." + name).node();
  if (!node || !node->is_string()) return options;
  const auto uri = std::find_if(entry.spec.options.begin(), entry.spec.options.end(),
                                [](const OptionSpec& o) { return o.name == "uri" && o.type == OptionType::string; });
  if (uri == entry.spec.options.end())
    throw ConfigError(key_location(file, "logging." + name) + ": logging." + name +
                      " = \"...\" sets a logger's uri, and logger '" + name +
                      "' has none; give its options as a table [logging." + name + "]");
  auto values = options.values();
  values["uri"] = node->as_string()->get();
  return Options(values);
}

// Whether a URI holds a user (and maybe a password) before its host: "https://me:secret@host".
bool has_credentials(const std::string& uri) {
  const std::size_t host = uri.find("://");
  if (host == std::string::npos) return false;
  const std::size_t path = uri.find('/', host + 3);
  return uri.substr(host + 3, path == std::string::npos ? std::string::npos : path - host - 3).find('@') !=
         std::string::npos;
}

// mlflow switched on by MLFLOW_TRACKING_URI keeps that URI among its options: the resolved
// experiment.toml records it, and `plugtrain send-logs` finds the server without the variable.
// Not a URI with a password in it: that stays in the environment.
Options with_tracking_uri(Options options) {
  const char* uri = std::getenv("MLFLOW_TRACKING_URI");
  if (uri && has_credentials(uri)) return options;
  auto values = options.values();
  const auto given = values.find("uri");
  if (!uri || given == values.end() || !std::holds_alternative<std::string>(given->second) ||
      !std::get<std::string>(given->second).empty())
    return options;
  given->second = std::string(uri);
  return Options(values);
}

std::vector<std::string> registered_names(const PluginHost& host) {
  std::vector<std::string> names;
  for (const RegisteredLogger& l : host.loggers().all()) names.push_back(l.spec.name);
  return names;
}

// A value as a param: a string as it is, a number in its shortest exact form ("0.1"), an array
// as "[a, b]".
std::string value_text(const toml::node& node) {
  if (const auto* s = node.as_string()) return s->get();
  if (const auto* f = node.as_floating_point()) {
    char buffer[64];
    const auto end = std::to_chars(buffer, buffer + sizeof buffer, f->get()).ptr;
    return std::string(buffer, end);
  }
  if (const auto* i = node.as_integer()) return std::to_string(i->get());
  if (const auto* b = node.as_boolean()) return b->get() ? "true" : "false";
  if (const auto* a = node.as_array()) {
    std::string text = "[";
    for (const toml::node& item : *a) text += (text.size() > 1 ? ", " : "") + value_text(item);
    return text + "]";
  }
  std::ostringstream other;  // dates and times: TOML's own form
  node.visit([&](const auto& v) { other << v; });
  return other.str();
}

void flatten(const toml::table& table, const std::string& prefix,
             std::vector<std::pair<std::string, std::string>>& out) {
  for (auto&& [key, node] : table) {
    const std::string path = prefix.empty() ? std::string(key.str()) : prefix + "/" + std::string(key.str());
    if (const toml::table* inner = node.as_table()) {
      flatten(*inner, path, out);
      continue;
    }
    out.emplace_back(path, value_text(node));
  }
}

}  // namespace

std::vector<NamedLogger> resolve_loggers(const ExperimentFile& file, Experiment& e, const PluginHost& host) {
  std::vector<NamedLogger> made;
  const std::vector<std::string> names = loggers_on(file, e, host);
  for (const std::string& name : names) {
    const RegisteredLogger* entry = host.loggers().find(name);
    if (!entry) {
      const std::vector<std::string> known = registered_names(host);
      throw ConfigError(logger_location(file, name) + ": unknown logger '" + name + "'" + did_you_mean(name, known) +
                        "; the loggers are " + join(known, ", ", "none") + " (`plugtrain loggers`)");
    }
    Options options = resolve_table_options(file, "logging." + name, "logger '" + name + "'", entry->spec.options,
                                            entry->spec.rules, {});
    if (name == "mlflow") options = with_tracking_uri(std::move(options));
    options = with_uri_shorthand(file, name, *entry, std::move(options));
    std::shared_ptr<Logger> logger;
    try {
      logger = entry->spec.factory(options);
    } catch (const std::exception& error) {
      throw ConfigError(refusal_location(file, name, error.what()) + ": " + error.what());
    }
    if (!logger)
      throw ConfigError(logger_location(file, name) + ": logger '" + name + "' (plugin '" + entry->plugin +
                        "') made no logger");
    e.logging.options[name] = std::move(options);
    made.push_back({name, std::move(logger), entry->spec.takes_files});
  }
  e.logging.loggers = names;
  return made;
}

std::vector<std::pair<std::string, std::string>> logged_params(const std::string& resolved_toml) {
  std::vector<std::pair<std::string, std::string>> out;
  toml::table record = toml::parse(resolved_toml);
  record.erase("logging");
  flatten(record, "", out);
  std::sort(out.begin(), out.end());
  return out;
}

std::map<std::string, std::string> logger_parents_from_environment() {
  std::map<std::string, std::string> parents;
  const char* text = std::getenv(kLoggerParentsVariable);
  if (!text || !*text) return parents;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return parents;  // the sweep's own variable: not one of ours, no parent
  for (const auto& [name, state] : j.items())
    if (state.is_string()) parents[name] = state.get<std::string>();
  return parents;
}

std::vector<RunArtifact> run_artifacts(const std::filesystem::path& run_folder,
                                       const std::filesystem::path& checkpoints, std::ostream& log) {
  std::vector<RunArtifact> files;
  for (const char* name : {"summary.json", "metrics.csv", "experiment.toml", "classes.json", "confusion.csv"})
    if (std::filesystem::is_regular_file(run_folder / name)) files.push_back({run_folder / name, name});
  if (checkpoints.empty()) return files;
  for (const char* name : {"best.ckpt", "last.ckpt"}) {
    const std::filesystem::path checkpoint = checkpoints / name;
    if (!std::filesystem::is_regular_file(checkpoint)) continue;
    const std::filesystem::path weights = run_folder / "model.safetensors";
    try {
      export_weights(checkpoint, weights, ExportFormat::safetensors, /*ema=*/false);
      files.push_back({weights, "model.safetensors"});
    } catch (const std::exception& error) {  // the run is done: a logger's file never fails it
      log << "loggers: no model.safetensors for them: " << first_line(error.what()) << "\n";
    }
    break;
  }
  return files;
}

}  // namespace plugtrain
