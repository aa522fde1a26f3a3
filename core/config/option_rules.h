// A models plugin's OptionRules (SDK 3.2) against option values: what a rule says is wrong,
// and whether rules fit the options they name (checked when the plugin registers them).
#pragma once

#include <string>
#include <vector>

#include "plugtrain/options.h"
#include "util/result.h"

namespace plugtrain {

// Refused, with why, when `value` of option `path` (e.g. "model.hidden") breaks `rule`.
Status keeps_rule(const OptionRule& rule, const std::string& path, const OptionValue& value);

// Why `rules` do not fit `options` (a rule naming no option, or a bound on a string option,
// choices on a number, a length on a scalar): refused with the first misfit, fine when they fit.
Status rules_fit(const std::vector<OptionSpec>& options, const std::vector<OptionRule>& rules);

}  // namespace plugtrain
