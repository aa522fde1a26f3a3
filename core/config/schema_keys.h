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

#include "config/choices.h"
#include "config/experiment.h"
#include "config/experiment_schema.h"
#include "config/toml_text.h"

namespace plugtrain::schema {

using Check = std::function<Status(const ConfigValue&)>;

// The checks a value must pass; each is fine, or refused with what is wrong.
Check greater_than(double bound);
Check at_least(double bound);
Check between(double lo, double hi);
Check at_least_below(double lo, double hi);  // [lo, hi)
Check folder_name();  // one folder name: not empty, no separator, not "." or ".."
Check absolute_paths();  // every entry of a list of paths starts at / (none depends on the working directory)
Check one_of(std::vector<std::string> allowed);
Check all_positive();
Check betas_check();
Check ordered_pair(double min, double max);  // lo <= hi, each in [min, max]


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

// Where a key's value lives in an Experiment: its table's struct, then the field.
template <class T>
using Field = std::function<T&(Experiment&)>;
template <class Table, class T>
Field<T> field(Table Experiment::*table, T Table::*member) {
  return [table, member](Experiment& e) -> T& { return (e.*table).*member; };
}
template <class T>
Field<T> augment_field(T AugmentConfig::*member) {
  return [member](Experiment& e) -> T& { return e.data.augment.*member; };
}
template <class T>
const T& read(const Field<T>& f, const Experiment& e) {
  return f(const_cast<Experiment&>(e));  // the accessor only names the field
}

// One schema row bound to a field of a plain type.
template <class T>
ConfigKey key(std::string path, Field<T> field, std::string doc, Check check = nullptr) {
  ConfigKey k;
  k.path = std::move(path);
  k.type = TypeOf<T>::value;
  k.doc = std::move(doc);
  k.check = std::move(check);
  k.store = [field](Experiment& e, const ConfigValue& v) { field(e) = std::get<T>(v); };
  k.default_text = [field](const Experiment& e) { return text(read(field, e)); };
  return k;
}

// A word from the enum's table (config/choices.h), checked and stored as the enum; with
// `or_auto` the field is an optional and "auto" is nullopt.
template <class E>
ConfigKey choice_key(std::string path, Field<E> field, std::string doc) {
  ConfigKey k = key<std::string>(std::move(path), nullptr, std::move(doc), one_of(choice_words<E>()));
  k.store = [field](Experiment& e, const ConfigValue& v) { field(e) = *choice_named<E>(std::get<std::string>(v)); };
  k.default_text = [field](const Experiment& e) { return text(std::string(word_of(read(field, e)))); };
  return k;
}
template <class E>
ConfigKey choice_or_auto_key(std::string path, Field<std::optional<E>> field, std::string doc) {
  std::vector<std::string> words = choice_words<E>();
  words.insert(words.begin(), "auto");
  ConfigKey k = key<std::string>(std::move(path), nullptr, std::move(doc), one_of(words));
  k.store = [field](Experiment& e, const ConfigValue& v) { field(e) = choice_named<E>(std::get<std::string>(v)); };
  k.default_text = [field](const Experiment& e) { return text(word_or_auto(read(field, e))); };
  return k;
}
template <class E>
ConfigKey choice_list_key(std::string path, Field<std::vector<E>> field, std::string doc) {
  ConfigKey k = key<std::vector<std::string>>(std::move(path), nullptr, std::move(doc), one_of(choice_words<E>()));
  k.store = [field](Experiment& e, const ConfigValue& v) {
    field(e).clear();
    for (const std::string& word : std::get<std::vector<std::string>>(v)) field(e).push_back(*choice_named<E>(word));
  };
  k.default_text = [field](const Experiment& e) {
    std::vector<std::string> words;
    for (E value : read(field, e)) words.emplace_back(word_of(value));
    return text(words);
  };
  return k;
}

// Keys that take a word beside a number, a boolean or a name; the word is nullopt.
ConfigKey count_or_auto_key(std::string path, Field<std::optional<std::int64_t>> field, std::string doc);  // >= 1
ConfigKey count_zero_or_auto_key(std::string path, Field<std::optional<std::int64_t>> field, std::string doc);  // >= 0
ConfigKey boolean_or_default_key(std::string path, Field<std::optional<bool>> field, std::string doc);
ConfigKey boolean_or_auto_key(std::string path, Field<std::optional<bool>> field, std::string doc);
ConfigKey name_or_auto_key(std::string path, Field<std::optional<std::string>> field, std::string doc);

// Marks a key as one that may change when a run is resumed.
ConfigKey resumable(ConfigKey k);

}  // namespace plugtrain::schema
