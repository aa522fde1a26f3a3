// The experiment files tests write, from one builder: a test says which tables and keys its run
// has, with typed values, and the builder writes the TOML.
//
//   ExperimentToml::synthetic("grid").on_cpu()
//       .set("model.hidden", {16})               // an array
//       .set("optim.name", "adam")               // a string, quoted and escaped
//       .unset("optim.momentum")                 // the run takes the default
//       .set("sweep.optim.lr", {0.01, 0.1})      // in [sweep], the dotted key optim.lr
//       .set_in("sweep.when.\"optim.name=sgd\"", "optim.lr", 0.1)
//       .write(dir / "exp.toml");
//
// "table.key" splits at the first dot; a table whose name has a dot is named whole in set_in.
// Tables and keys keep the order they were first set in. Values are typed: integers, floats
// (always written with a point or an exponent), booleans, strings, arrays ({1, 8, 8}), inline
// tables (TomlValue::table), and TomlValue::raw for TOML written as given.
#pragma once

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace plugtrain::testing {

// One TOML value, already written as TOML text.
class TomlValue {
 public:
  TomlValue(bool b) : text_(b ? "true" : "false") {}  // NOLINT: values convert where a key takes one
  template <typename Int, std::enable_if_t<std::is_integral_v<Int> && !std::is_same_v<Int, bool>, int> = 0>
  TomlValue(Int i) : text_(std::to_string(i)) {}                                   // NOLINT
  TomlValue(double d) : text_(float_text(d)) {}                                    // NOLINT
  TomlValue(const char* s) : text_(quoted(s)) {}                                   // NOLINT
  TomlValue(const std::string& s) : text_(quoted(s)) {}                            // NOLINT
  TomlValue(std::initializer_list<TomlValue> items) : text_(array_text(items)) {}  // NOLINT: [1, 8, 8]

  // An array of values known only at run time.
  static TomlValue array(const std::vector<TomlValue>& items) { return raw(array_text(items)); }

  // TOML written as given: a value no constructor makes (a date, a mixed array).
  static TomlValue raw(std::string toml) { return TomlValue(Raw{std::move(toml)}); }
  // An inline table: { log_uniform = [0.0001, 0.1] }.
  static TomlValue table(std::initializer_list<std::pair<std::string, TomlValue>> entries) {
    std::string text = "{ ";
    for (const auto& [key, value] : entries) text += (text.size() > 2 ? ", " : "") + key + " = " + value.text();
    return raw(text + " }");
  }

  const std::string& text() const { return text_; }

  // "text" as a TOML basic string: quotes, backslashes and control characters escaped.
  static std::string quoted(const std::string& text) {
    std::string out = "\"";
    for (const char c : text) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (c == '\n') {
        out += "\\n";
      } else if (c == '\t') {
        out += "\\t";
      } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
        char escape[8];
        std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned char>(c));
        out += escape;
      } else {
        out += c;
      }
    }
    return out + "\"";
  }

 private:
  struct Raw {
    std::string text;
  };
  explicit TomlValue(Raw raw) : text_(std::move(raw.text)) {}

  // The shortest text that reads back as `d`, always a float to TOML: 0.1, 1e-05, 2.0, inf.
  static std::string float_text(double d) {
    char buffer[32];
    const auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, d);
    std::string text(buffer, error == std::errc() ? end : buffer);
    if (text.find_first_of(".eEn") == std::string::npos) text += ".0";  // "n": inf and nan
    return text;
  }
  template <typename Items>
  static std::string array_text(const Items& items) {
    std::string text = "[";
    for (const TomlValue& item : items) text += (text.size() > 1 ? ", " : "") + item.text();
    return text + "]";
  }

  std::string text_;
};

class ExperimentToml {
 public:
  // [experiment] name = `name` and nothing else: every other table takes its defaults.
  explicit ExperimentToml(const std::string& name) { set("experiment.name", name); }

  // The small classification run that end-to-end tests build on: an MLP on 800 synthetic 8x8
  // samples of 4 classes (200 test), batches of 50, SGD with momentum, 3 epochs, no step
  // logging. Every machine trains it in seconds; `name` is its runs/<name>/ folder.
  static ExperimentToml synthetic(const std::string& name) {
    ExperimentToml e(name);
    e.set("experiment.seed", 7);
    e.set("model.name", "mlp").set("model.hidden", {32});
    e.set("data.dataset", "synthetic").set("data.synthetic_shape", {1, 8, 8}).set("data.synthetic_classes", 4);
    e.set("data.synthetic_train_size", 800).set("data.synthetic_test_size", 200).set("data.batch_size", 50);
    e.set("optim.name", "sgd").set("optim.lr", 0.1).set("optim.momentum", 0.9);
    return e.set("train.epochs", 3).set("train.log_interval", 0);
  }

  // "table.key" = value, replacing the key's value or adding the key (and its table) last.
  ExperimentToml& set(const std::string& dotted_key, const TomlValue& value) {
    const std::size_t dot = dotted_key.find('.');
    if (dot == std::string::npos) throw std::invalid_argument("ExperimentToml::set: '" + dotted_key + "' names no key");
    return set_in(dotted_key.substr(0, dot), dotted_key.substr(dot + 1), value);
  }
  // The same in a table named whole: set_in("sweep.when.\"optim.name=sgd\"", "optim.lr", 0.1).
  ExperimentToml& set_in(const std::string& table_name, const std::string& key, const TomlValue& value) {
    std::vector<Entry>& entries = table(table_name).entries_of(table_name);
    for (Entry& entry : entries)
      if (entry.first == key) {
        entry.second = value.text();
        return *this;
      }
    entries.emplace_back(key, value.text());
    return *this;
  }

  // Several keys of one table: set_keys("data", {{"dataset", "cifar10"}, {"path", "c10"}}).
  ExperimentToml& set_keys(const std::string& table_name, const std::vector<std::pair<std::string, TomlValue>>& keys) {
    for (const auto& [key, value] : keys) set_in(table_name, key, value);
    return *this;
  }

  // "table.key" goes (the run takes its default); a table's whole name drops that table.
  ExperimentToml& unset(const std::string& dotted_key) {
    for (auto it = tables_.begin(); it != tables_.end(); ++it)
      if (it->first == dotted_key) {
        tables_.erase(it);
        return *this;
      }
    const std::size_t dot = dotted_key.find('.');
    if (dot == std::string::npos) return *this;
    for (auto& [name, entries] : tables_)
      if (name == dotted_key.substr(0, dot))
        for (auto it = entries.begin(); it != entries.end(); ++it)
          if (it->first == dotted_key.substr(dot + 1)) {
            entries.erase(it);
            return *this;
          }
    return *this;
  }

  // The table `name` is written even when it has no keys ([dataset] with every default).
  ExperimentToml& table(const std::string& name) {
    entries_of(name);
    return *this;
  }

  // backend.name = "cpu": the host CPU named, for figures that must not depend on the machine.
  ExperimentToml& on_cpu() { return set("backend.name", "cpu"); }

  std::string text() const {
    std::string text;
    for (const auto& [name, entries] : tables_) {
      text += (text.empty() ? "[" : "\n[") + name + "]\n";
      for (const auto& [key, value] : entries) text += key + " = " + value + "\n";
    }
    return text;
  }
  // Writes the text to `file` (exp.toml in a test's folder, usually); returns `file`.
  std::filesystem::path write(const std::filesystem::path& file) const {
    std::ofstream(file) << text();
    return file;
  }

 private:
  using Entry = std::pair<std::string, std::string>;  // key, value as TOML

  std::vector<Entry>& entries_of(const std::string& name) {
    for (auto& [table_name, entries] : tables_)
      if (table_name == name) return entries;
    tables_.emplace_back(name, std::vector<Entry>{});
    return tables_.back().second;
  }

  std::vector<std::pair<std::string, std::vector<Entry>>> tables_;
};

}  // namespace plugtrain::testing
