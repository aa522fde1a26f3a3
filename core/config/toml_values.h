// TOML nodes as the schema's values, and where they came from: the conversions and messages
// the experiment loader (config/experiment_loader.cpp) uses for every key. Only core/config
// includes this.
#pragma once

#include <optional>
#include <string>

#include <toml++/toml.h>

#include "config/experiment_loader.h"
#include "config/experiment_schema.h"
#include "plugtrain/options.h"
#include "util/result.h"

namespace plugtrain {

// "exp.toml:7:1" for a region of `source`.
std::string position(const std::string& source, const toml::source_region& region);
// The same for a node of the file: "exp.toml:7:1", or the file's name for a node --set made.
std::string position(const ExperimentFile& file, const toml::node& node);
// Where a key came from: "--set optim.lr" or "exp.toml:7:1".
std::string where(const ExperimentFile& file, const std::string& path, const toml::source_region& region);
// "string", "integer", "table", ... for messages.
std::string type_name(const toml::node& node);
// A TOML node as the type the schema expects; nullopt when it is another type. An integer is
// accepted where a float is expected (lr = 1).
std::optional<ConfigValue> convert(const toml::node& node, ConfigType type);
ConfigType config_type(OptionType t);
OptionValue option_value(const ConfigValue& v);
// inf and nan pass range checks written as comparisons; no key wants them: refused when `v`
// holds one.
Status all_finite(const ConfigValue& v);

}  // namespace plugtrain
