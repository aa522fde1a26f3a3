// The building blocks of the experiment schema (experiment_schema.cpp): a row bound to an
// Experiment field, the checks a value must pass, and the key forms that take a word
// ("auto", "default") beside a number or a boolean. Only the schema uses them.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "config/experiment.h"
#include "config/experiment_schema.h"
#include "config/toml_text.h"

namespace plugtrain::schema {

using Check = std::function<std::optional<std::string>(const ConfigValue&)>;

template <class T> struct TypeOf;
template <> struct TypeOf<std::int64_t> { static constexpr ConfigType value = ConfigType::integer; };
template <> struct TypeOf<double> { static constexpr ConfigType value = ConfigType::real; };
template <> struct TypeOf<bool> { static constexpr ConfigType value = ConfigType::boolean; };
template <> struct TypeOf<std::string> { static constexpr ConfigType value = ConfigType::string; };
template <> struct TypeOf<std::vector<std::int64_t>> { static constexpr ConfigType value = ConfigType::integer_list; };
template <> struct TypeOf<std::vector<double>> { static constexpr ConfigType value = ConfigType::real_list; };
template <> struct TypeOf<std::vector<std::string>> { static constexpr ConfigType value = ConfigType::string_list; };

inline std::string text(std::int64_t v) { return std::to_string(v); }
inline std::string text(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}
inline std::string text(bool v) { return v ? "true" : "false"; }
inline std::string text(const std::string& v) { return toml_quoted(v); }
template <class T>
std::string text(const std::vector<T>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + text(v[i]);
  return s + "]";
}

// One schema row bound to an Experiment field.
template <class T>
ConfigKey key(std::string path, T Experiment::*field, std::string doc, Check check = nullptr) {
  ConfigKey k;
  k.path = std::move(path);
  k.type = TypeOf<T>::value;
  k.doc = std::move(doc);
  k.check = std::move(check);
  k.store = [field](Experiment& e, const ConfigValue& v) { e.*field = std::get<T>(v); };
  k.default_text = [field](const Experiment& e) { return text(e.*field); };
  return k;
}

// The checks a value must pass; each returns why it is refused, or nothing.
Check greater_than(double bound);
Check at_least(double bound);
Check between(double lo, double hi);
Check folder_name();  // one folder name: not empty, no separator, not "." or ".."
Check one_of(std::vector<std::string> allowed);
Check all_positive();
Check betas_check();
Check ordered_pair(double min, double max);  // lo <= hi, each in [min, max]

// Keys that take a word beside a number or a boolean.
ConfigKey count_or_auto_key(std::string path, std::int64_t Experiment::*field, std::string doc);       // "auto": 0
ConfigKey count_zero_or_auto_key(std::string path, std::int64_t Experiment::*field, std::string doc);  // "auto": -1
ConfigKey boolean_or_default_key(std::string path, std::string Experiment::*field, std::string doc);
ConfigKey boolean_or_auto_key(std::string path, std::string Experiment::*field, std::string doc);

// Marks a key as one that may change when a run is resumed.
ConfigKey resumable(ConfigKey k);

}  // namespace plugtrain::schema
