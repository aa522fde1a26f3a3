#include "config/toml_values.h"

#include <cmath>

#include "util/text.h"

namespace plugtrain {

std::string position(const std::string& source, const toml::source_region& region) {
  if (region.begin.line == 0) return source;
  return source + ":" + std::to_string(region.begin.line) + ":" + std::to_string(region.begin.column);
}

std::string position(const ExperimentFile& file, const toml::node& node) { return position(file.source, node.source()); }

// Where a key came from: "--set optim.lr" or "exp.toml:7:1".
std::string where(const ExperimentFile& file, const std::string& path, const toml::source_region& region) {
  if (file.overridden.count(path)) return "--set " + path;
  // A table or key that only an override created: name that override.
  for (const auto& o : file.overridden)
    if (o.compare(0, path.size() + 1, path + ".") == 0 && region.begin.line == 0) return "--set " + o;
  return position(file.source, region);
}

std::string type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table: return "table";
    case toml::node_type::array: return "array";
    case toml::node_type::string: return "string";
    case toml::node_type::integer: return "integer";
    case toml::node_type::floating_point: return "float";
    case toml::node_type::boolean: return "boolean";
    default: return "date/time";
  }
}

// Converts a TOML node to the type the schema expects; nullopt when it is another type.
// An integer is accepted where a float is expected (lr = 1).
std::optional<ConfigValue> convert(const toml::node& node, ConfigType type) {
  auto list = [&](auto element) -> std::optional<ConfigValue> {
    using T = decltype(element);
    const toml::array* array = node.as_array();
    if (!array) return std::nullopt;
    std::vector<T> out;
    for (const toml::node& item : *array) {
      std::optional<ConfigValue> v = convert(item, std::is_same_v<T, std::int64_t> ? ConfigType::integer
                                                   : std::is_same_v<T, double>     ? ConfigType::real
                                                                                   : ConfigType::string);
      if (!v) return std::nullopt;
      out.push_back(std::get<T>(*v));
    }
    return ConfigValue(out);
  };
  switch (type) {
    case ConfigType::integer:
      if (auto v = node.as_integer()) return ConfigValue(v->get());
      return std::nullopt;
    case ConfigType::real:
      if (auto v = node.as_floating_point()) return ConfigValue(v->get());
      if (auto v = node.as_integer()) return ConfigValue(double(v->get()));
      return std::nullopt;
    case ConfigType::boolean:
      if (auto v = node.as_boolean()) return ConfigValue(v->get());
      return std::nullopt;
    case ConfigType::string:
      if (auto v = node.as_string()) return ConfigValue(v->get());
      return std::nullopt;
    case ConfigType::integer_list: return list(std::int64_t{});
    case ConfigType::real_list: return list(double{});
    case ConfigType::string_list: return list(std::string{});
    case ConfigType::count_or_auto:
      if (auto v = node.as_integer()) return ConfigValue(v->get());
      if (auto v = node.as_string(); v && v->get() == "auto") return ConfigValue(std::string("auto"));
      return std::nullopt;
    case ConfigType::boolean_or_default:
      if (auto v = node.as_boolean()) return ConfigValue(v->get());
      if (auto v = node.as_string(); v && v->get() == "default") return ConfigValue(std::string("default"));
      return std::nullopt;
    case ConfigType::boolean_or_auto:
      if (auto v = node.as_boolean()) return ConfigValue(v->get());
      if (auto v = node.as_string(); v && v->get() == "auto") return ConfigValue(std::string("auto"));
      return std::nullopt;
  }
  return std::nullopt;
}

ConfigType config_type(OptionType t) {
  switch (t) {
    case OptionType::integer: return ConfigType::integer;
    case OptionType::real: return ConfigType::real;
    case OptionType::boolean: return ConfigType::boolean;
    case OptionType::string: return ConfigType::string;
    case OptionType::integer_list: return ConfigType::integer_list;
    case OptionType::real_list: return ConfigType::real_list;
  }
  return ConfigType::string;
}

OptionValue option_value(const ConfigValue& v) {
  return std::visit(
      [](const auto& x) -> OptionValue {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          return std::string();  // no model option is a string list
        } else {
          return x;
        }
      },
      v);
}

// inf and nan pass range checks written as comparisons; no key wants them.
Status all_finite(const ConfigValue& v) {
  auto bad = [](double x) { return !std::isfinite(x); };
  if (const double* d = std::get_if<double>(&v); d && bad(*d)) return WhyNot{"must be a finite number"};
  if (const auto* list = std::get_if<std::vector<double>>(&v))
    for (double x : *list)
      if (bad(x)) return WhyNot{"must hold finite numbers"};
  return Status::fine();
}


}  // namespace plugtrain
