#include "config/option_rules.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <sstream>

#include "config/suggest.h"
#include "util/text.h"

namespace plugtrain {

namespace {

std::string number_text(double v) {
  std::ostringstream out;
  out.precision(std::numeric_limits<double>::max_digits10);
  out << v;
  return out.str();
}
std::string number_text(std::int64_t v) { return std::to_string(v); }

// Refused with what `v` must be ("must be >= 1") when it is outside the rule's bounds.
Status within_bounds(const OptionRule& rule, double v) {
  if (rule.min && (rule.min_exclusive ? !(v > *rule.min) : !(v >= *rule.min)))
    return WhyNot{std::string(rule.min_exclusive ? "must be > " : "must be >= ") + number_text(*rule.min)};
  if (rule.max && (rule.max_exclusive ? !(v < *rule.max) : !(v <= *rule.max)))
    return WhyNot{std::string(rule.max_exclusive ? "must be < " : "must be <= ") + number_text(*rule.max)};
  return Status::fine();
}

template <class T>
Status list_keeps_rule(const OptionRule& rule, const std::string& path, const std::vector<T>& list) {
  const std::size_t n = list.size();
  if ((rule.min_length && n < *rule.min_length) || (rule.max_length && n > *rule.max_length)) {
    const std::string lo = std::to_string(rule.min_length.value_or(0));
    const std::string range = !rule.max_length                ? "at least " + lo
                              : rule.min_length == rule.max_length ? "exactly " + lo
                                                                   : lo + " to " + std::to_string(*rule.max_length);
    return WhyNot{path + " must have " + range + " entries (got " + std::to_string(n) + ")"};
  }
  for (std::size_t i = 0; i < n; ++i)
    if (Status bounded = within_bounds(rule, double(list[i])); !bounded)
      return WhyNot{path + "[" + std::to_string(i) + "] " + bounded.why_not() + " (got " + number_text(list[i]) + ")"};
  return Status::fine();
}

bool is_number(OptionType t) { return t == OptionType::integer || t == OptionType::real; }
bool is_list(OptionType t) { return t == OptionType::integer_list || t == OptionType::real_list; }

}  // namespace

Status keeps_rule(const OptionRule& rule, const std::string& path, const OptionValue& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value))
    if (Status bounded = within_bounds(rule, double(*i)); !bounded)
      return WhyNot{path + " " + bounded.why_not() + " (got " + number_text(*i) + ")"};
  if (const auto* d = std::get_if<double>(&value))
    if (Status bounded = within_bounds(rule, *d); !bounded)
      return WhyNot{path + " " + bounded.why_not() + " (got " + number_text(*d) + ")"};
  if (const auto* list = std::get_if<std::vector<std::int64_t>>(&value)) return list_keeps_rule(rule, path, *list);
  if (const auto* list = std::get_if<std::vector<double>>(&value)) return list_keeps_rule(rule, path, *list);
  if (const auto* s = std::get_if<std::string>(&value))
    if (!rule.choices.empty() && std::find(rule.choices.begin(), rule.choices.end(), *s) == rule.choices.end())
      return WhyNot{path + " must be one of " + join(rule.choices, ", ", "") + " (got \"" + *s + "\")" +
                    did_you_mean(*s, rule.choices)};
  return Status::fine();
}

Status rules_fit(const std::vector<OptionSpec>& options, const std::vector<OptionRule>& rules) {
  for (const OptionRule& rule : rules) {
    auto option = std::find_if(options.begin(), options.end(), [&](const OptionSpec& o) { return o.name == rule.option; });
    if (option == options.end())
      return WhyNot{"a rule names option '" + rule.option + "', which the model does not have"};
    const OptionType t = option->type;
    if ((rule.min || rule.max) && !is_number(t) && !is_list(t))
      return WhyNot{"option '" + rule.option + "' is a " + to_string(t) + ": it cannot have bounds"};
    if (!rule.choices.empty() && t != OptionType::string)
      return WhyNot{"option '" + rule.option + "' is a " + to_string(t) + ": only a string option has choices"};
    if ((rule.min && rule.max && *rule.min > *rule.max) ||
        (rule.min_length && rule.max_length && *rule.min_length > *rule.max_length))
      return WhyNot{"option '" + rule.option + "': its rule allows no value (a minimum above its maximum)"};
    if ((rule.min_length || rule.max_length) && !is_list(t))
      return WhyNot{"option '" + rule.option + "' is a " + to_string(t) + ": only a list has a length"};
    if (Status default_kept = keeps_rule(rule, "its default", option->default_value); !default_kept)
      return WhyNot{"option '" + rule.option + "': " + default_kept.why_not()};
  }
  return Status::fine();
}

}  // namespace plugtrain
