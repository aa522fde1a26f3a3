#include "config/experiment_schema.h"

#include "config/experiment_schema_parts.h"

namespace plugtrain {

const char* to_string(ConfigType t) {
  switch (t) {
    case ConfigType::integer: return "integer";
    case ConfigType::real: return "float";
    case ConfigType::boolean: return "boolean";
    case ConfigType::string: return "string";
    case ConfigType::integer_list: return "array of integers";
    case ConfigType::real_list: return "array of floats";
    case ConfigType::string_list: return "array of strings";
    case ConfigType::count_or_auto: return "integer or \"auto\"";
    case ConfigType::boolean_or_default: return "boolean or \"default\"";
    case ConfigType::boolean_or_auto: return "boolean or \"auto\"";
  }
  return "?";
}

const std::vector<std::string>& experiment_tables() {
  static const std::vector<std::string> tables = {"experiment", "backend",        "plugins",     "model",    "task",
                                                  "dataset",    "data",           "optim",       "schedule", "train",
                                                  "checkpoint", "early_stopping", "distributed", "logging",  "sweep"};
  return tables;
}

const std::vector<ConfigKey>& experiment_schema() {
  // In the tables' order: resolved experiment.toml files print them so.
  static const std::vector<ConfigKey> schema = [] {
    std::vector<ConfigKey> keys = setup_keys();
    for (auto part : {data_keys(), training_keys()}) keys.insert(keys.end(), part.begin(), part.end());
    return keys;
  }();
  return schema;
}

}  // namespace plugtrain
