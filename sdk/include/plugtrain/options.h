// plugtrain SDK 5 — typed options with a schema and rules: a model's, data set's, task's or
// logger's table.
//
// A spec (ModelSpec, ...) lists its OptionSpecs and OptionRules; Options, the resolved values
// the host hands a factory, is a map of the OptionValue variant.
#pragma once

#include <cstdint>
#include <cstddef>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace plugtrain {

enum class OptionType { integer, real, boolean, string, integer_list, real_list };

inline const char* to_string(OptionType t) {
  switch (t) {
    case OptionType::integer: return "int";
    case OptionType::real: return "float";
    case OptionType::boolean: return "bool";
    case OptionType::string: return "string";
    case OptionType::integer_list: return "int list";
    case OptionType::real_list: return "float list";
  }
  return "?";
}

using OptionValue = std::variant<std::int64_t, double, bool, std::string,
                                 std::vector<std::int64_t>, std::vector<double>>;

struct OptionSpec {
  std::string name;
  OptionType type = OptionType::integer;
  OptionValue default_value;  // must hold the alternative that `type` names
  std::string doc;
};

// Which values an option accepts. The host checks every rule against the experiment before any
// data is loaded, so a bad value is exit 2 with file:line:col and no run folder. Bounds apply to
// an integer or float option, or to each element of a list option; lengths to a list; choices to
// a string option. A rule naming no option makes the plugin fail to load. For example:
//   {plugtrain::OptionRule("hidden").at_least(1).length(1, 16),
//    plugtrain::OptionRule("dropout").at_least(0).below(1),
//    plugtrain::OptionRule("activation").one_of({"relu", "gelu"})}
struct OptionRule {
  explicit OptionRule(std::string option_name) : option(std::move(option_name)) {}
  OptionRule& at_least(double v) { return set_min(v, false); }
  OptionRule& above(double v) { return set_min(v, true); }
  OptionRule& at_most(double v) { return set_max(v, false); }
  OptionRule& below(double v) { return set_max(v, true); }
  OptionRule& one_of(std::vector<std::string> allowed) {
    choices = std::move(allowed);
    return *this;
  }
  OptionRule& length(std::size_t at_least_entries, std::size_t at_most_entries) {
    min_length = at_least_entries;
    max_length = at_most_entries;
    return *this;
  }

  std::string option;
  std::optional<double> min, max;
  bool min_exclusive = false, max_exclusive = false;
  std::vector<std::string> choices;
  std::optional<std::size_t> min_length, max_length;

 private:
  OptionRule& set_min(double v, bool exclusive) {
    min = v;
    min_exclusive = exclusive;
    return *this;
  }
  OptionRule& set_max(double v, bool exclusive) {
    max = v;
    max_exclusive = exclusive;
    return *this;
  }
};

// Resolved option values: every declared option is present (defaults filled in by the host).
class Options {
 public:
  Options() = default;
  explicit Options(std::map<std::string, OptionValue> values) : values_(std::move(values)) {}

  template <class T>
  const T& get(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end()) throw std::invalid_argument("option '" + name + "' is not set");
    if (const T* v = std::get_if<T>(&it->second)) return *v;
    throw std::invalid_argument("option '" + name + "' has another type");
  }
  std::int64_t integer(const std::string& n) const { return get<std::int64_t>(n); }
  double real(const std::string& n) const { return get<double>(n); }
  bool boolean(const std::string& n) const { return get<bool>(n); }
  const std::string& string(const std::string& n) const { return get<std::string>(n); }
  const std::vector<std::int64_t>& integers(const std::string& n) const {
    return get<std::vector<std::int64_t>>(n);
  }
  const std::map<std::string, OptionValue>& values() const { return values_; }

 private:
  std::map<std::string, OptionValue> values_;
};

}  // namespace plugtrain
