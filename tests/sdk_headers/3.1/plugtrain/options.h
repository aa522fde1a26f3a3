// plugtrain SDK — typed options with a schema (used by model plugins and the host).
#pragma once

#include <cstdint>
#include <map>
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
