// A models plugin's OptionRules (SDK 3.2) against option values: what a rule says is wrong,
// and whether rules fit the options they name (checked when the plugin registers them).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "plugtrain/options.h"

namespace plugtrain {

// Why `value` of option `path` (e.g. "model.hidden") breaks `rule`, or nullopt when it keeps it.
std::optional<std::string> rule_violation(const OptionRule& rule, const std::string& path, const OptionValue& value);

// Why `rules` do not fit `options` (a rule naming no option, or a bound on a string option,
// choices on a number, a length on a scalar), or nullopt when they fit.
std::optional<std::string> rules_misfit(const std::vector<OptionSpec>& options, const std::vector<OptionRule>& rules);

}  // namespace plugtrain
