// Reading an experiment: TOML file -> --set overrides -> validated Experiment.
// Every problem is a ConfigError with one line naming file:line:col (or the --set) and key.
#pragma once

#include <filesystem>
#include <set>
#include <string>

#include <toml++/toml.h>

#include "config/experiment.h"
#include "plugtrain/options.h"

namespace plugtrain {

struct ModelSpec;  // plugtrain/model.h, which brings LibTorch's nn headers: only resolve_model_options needs it

struct ExperimentFile {
  std::string source;                  // path as given, for messages
  toml::table table;
  std::set<std::string> overridden;    // key paths set with --set
};

ExperimentFile parse_experiment_file(const std::filesystem::path& path);
// The same for text already read; `source` names it in messages.
ExperimentFile parse_experiment_text(const std::string& text, const std::string& source);

// "optim.lr=0.01": the value is read as a TOML value (0.01, "text", [1, 2], true);
// anything that is not valid TOML is taken as a bare string (model.name=mlp).
void apply_override(ExperimentFile& file, const std::string& assignment);

// "exp.toml:7:1" (or "--set data.path") for a key, for messages about its value.
std::string key_location(const ExperimentFile& file, const std::string& key_path);

// Checks every table and key except the model's own options (those need the model's schema).
Experiment resolve_experiment(const ExperimentFile& file);

// Checks a table of options (every key but `own_keys`) against a schema and its rules, and
// fills in defaults. `owner` names whose options they are in messages: "model 'mlp'".
Options resolve_table_options(const ExperimentFile& file, const std::string& table_name, const std::string& owner,
                              const std::vector<OptionSpec>& specs, const std::vector<OptionRule>& rules,
                              const std::vector<std::string>& own_keys);

// Checks the [model] table against the model's option schema and fills in defaults.
Options resolve_model_options(const ExperimentFile& file, const ModelSpec& spec,
                              const std::vector<OptionRule>& rules = {});

}  // namespace plugtrain
