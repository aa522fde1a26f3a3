// plugtrain SDK 4 — typed options with a schema and rules: a model's, data set's or task's table.
//
// OptionSpec and OptionRule are the plugin's own values: they reach the host as OptionsBuilder
// calls (add_options below), so they may grow. Options, the resolved values the host hands a
// factory, is a map of the closed OptionValue variant; enum values are only appended.
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

// Implemented by the host: the options of one model, data set or task. Calls are only appended.
class OptionsBuilder {
 public:
  virtual ~OptionsBuilder() = default;
  virtual void option(const std::string& name, OptionType type, const OptionValue& default_value,
                      const std::string& doc) = 0;
  virtual void lower_bound(const std::string& option, double bound, bool exclusive) = 0;
  virtual void upper_bound(const std::string& option, double bound, bool exclusive) = 0;
  virtual void choices(const std::string& option, const std::vector<std::string>& allowed) = 0;
  virtual void length(const std::string& option, std::size_t at_least_entries, std::size_t at_most_entries) = 0;
};

// Compiled into the plugin: the specs and rules as builder calls.
inline void add_options(OptionsBuilder& out, const std::vector<OptionSpec>& specs, const std::vector<OptionRule>& rules) {
  for (const OptionSpec& s : specs) out.option(s.name, s.type, s.default_value, s.doc);
  for (const OptionRule& r : rules) {
    if (r.min) out.lower_bound(r.option, *r.min, r.min_exclusive);
    if (r.max) out.upper_bound(r.option, *r.max, r.max_exclusive);
    if (!r.choices.empty()) out.choices(r.option, r.choices);
    if (r.min_length || r.max_length) out.length(r.option, r.min_length.value_or(0), r.max_length.value_or(SIZE_MAX));
  }
}

}  // namespace plugtrain
