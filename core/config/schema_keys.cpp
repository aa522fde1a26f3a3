#include "config/schema_keys.h"

#include <algorithm>

namespace plugtrain::schema {

// A count that may also be "auto" (nullopt).
ConfigKey count_or_auto_key(std::string path, Field<std::optional<std::int64_t>> field, std::string doc) {
  ConfigKey k = key<std::string>(std::move(path), nullptr, std::move(doc),
                                 [](const ConfigValue& v) -> Status {
                                   if (std::holds_alternative<std::string>(v) || std::get<std::int64_t>(v) >= 1)
                                     return Status::fine();
                                   return WhyNot{"must be >= 1 or \"auto\""};
                                 });
  k.type = ConfigType::count_or_auto;
  k.store = [field](Experiment& e, const ConfigValue& v) {
    field(e) = std::holds_alternative<std::string>(v) ? std::nullopt : std::optional(std::get<std::int64_t>(v));
  };
  k.default_text = [field](const Experiment& e) {
    const auto& value = read(field, e);
    return value ? text(*value) : std::string("\"auto\"");
  };
  return k;
}

static double number(const ConfigValue& v) {
  if (auto i = std::get_if<std::int64_t>(&v)) return double(*i);
  if (auto d = std::get_if<double>(&v)) return *d;
  return 0;
}

Check greater_than(double bound) {
  return [bound](const ConfigValue& v) -> Status {
    if (number(v) > bound) return Status::fine();
    return WhyNot{"must be > " + text(bound)};
  };
}
Check at_least(double bound) {
  return [bound](const ConfigValue& v) -> Status {
    if (number(v) >= bound) return Status::fine();
    return WhyNot{"must be >= " + text(bound)};
  };
}
Check between(double lo, double hi) {
  return [lo, hi](const ConfigValue& v) -> Status {
    const double x = number(v);
    if (x >= lo && x <= hi) return Status::fine();
    return WhyNot{"must be in [" + text(lo) + ", " + text(hi) + "]"};
  };
}
Check at_least_below(double lo, double hi) {
  return [lo, hi](const ConfigValue& v) -> Status {
    const double x = number(v);
    if (x >= lo && x < hi) return Status::fine();
    return WhyNot{"must be in [" + text(lo) + ", " + text(hi) + ")"};
  };
}
// One folder name inside the output folder: not empty, no separator, not "." or "..".
Check folder_name() {
  return [](const ConfigValue& v) -> Status {
    const std::string& name = std::get<std::string>(v);
    if (name.empty() || name == "." || name == "..") return WhyNot{"must name a folder (got \"" + name + "\")"};
    if (name.find('/') != std::string::npos || name.find('\\') != std::string::npos)
      return WhyNot{"must be one folder name without '/' (got \"" + name + "\"): runs go to experiment.output/name"};
    if (name.size() > 200) return WhyNot{"is longer than 200 characters"};
    for (char c : name)
      if (static_cast<unsigned char>(c) < 0x20) return WhyNot{"must not hold control characters"};
    return Status::fine();
  };
}

Check one_of(std::vector<std::string> allowed) {
  return [allowed](const ConfigValue& v) -> Status {
    auto check_one = [&](const std::string& s) -> Status {
      if (std::find(allowed.begin(), allowed.end(), s) != allowed.end()) return Status::fine();
      return WhyNot{"'" + s + "' is not one of " + text(allowed)};
    };
    if (auto s = std::get_if<std::string>(&v)) return check_one(*s);
    if (auto list = std::get_if<std::vector<std::string>>(&v))
      for (const auto& s : *list)
        if (Status listed = check_one(s); !listed) return listed;
    return Status::fine();
  };
}
Check absolute_paths() {
  return [](const ConfigValue& v) -> Status {
    if (auto list = std::get_if<std::vector<std::string>>(&v))
      for (const auto& p : *list)
        if (p.empty() || p.front() != '/')
          return WhyNot{"\"" + p + "\" is not an absolute path: a relative one would depend on the working directory"};
    return Status::fine();
  };
}
Check all_positive() {
  return [](const ConfigValue& v) -> Status {
    if (auto list = std::get_if<std::vector<std::int64_t>>(&v))
      for (auto x : *list)
        if (x <= 0) return WhyNot{"every entry must be > 0"};
    return Status::fine();
  };
}
Check betas_check() {
  return [](const ConfigValue& v) -> Status {
    const auto& b = std::get<std::vector<double>>(v);
    if (b.empty()) return Status::fine();
    if (b.size() != 2) return WhyNot{"must hold two values, e.g. [0.9, 0.999]"};
    for (double x : b)
      if (x < 0 || x >= 1) return WhyNot{"each beta must be in [0, 1)"};
    return Status::fine();
  };
}

// Two numbers lo <= hi, each in [min, max].
Check ordered_pair(double min, double max) {
  return [min, max](const ConfigValue& v) -> Status {
    const auto& p = std::get<std::vector<double>>(v);
    if (p.size() != 2) return WhyNot{"must hold two numbers [lo, hi]"};
    if (!(p[0] >= min && p[1] <= max && p[0] <= p[1]))
      return WhyNot{"must be [lo, hi] with " + text(min) + " <= lo <= hi <= " + text(max)};
    return Status::fine();
  };
}
// An integer >= 0 or "auto" (nullopt).
ConfigKey count_zero_or_auto_key(std::string path, Field<std::optional<std::int64_t>> field, std::string doc) {
  ConfigKey k = count_or_auto_key(std::move(path), field, std::move(doc));
  k.check = [](const ConfigValue& v) -> Status {
    if (auto s = std::get_if<std::string>(&v)) {
      if (*s == "auto") return Status::fine();
      return WhyNot{"must be an integer >= 0 or \"auto\" (got \"" + *s + "\")"};
    }
    if (std::get<std::int64_t>(v) >= 0) return Status::fine();
    return WhyNot{"must be >= 0 or \"auto\""};
  };
  return k;
}

// A key that is true, false or one word (`word`: "default", "auto"), the word kept as nullopt.
static ConfigKey boolean_or_word_key(std::string path, Field<std::optional<bool>> field, std::string doc,
                                     ConfigType type, std::string word) {
  ConfigKey k = key<bool>(std::move(path), nullptr, std::move(doc));
  k.type = type;
  k.store = [field](Experiment& e, const ConfigValue& v) {
    if (auto b = std::get_if<bool>(&v)) field(e) = *b;
    else field(e) = std::nullopt;
  };
  k.default_text = [field, word](const Experiment& e) {
    const auto& value = read(field, e);
    return value ? text(*value) : "\"" + word + "\"";
  };
  return k;
}

ConfigKey boolean_or_default_key(std::string path, Field<std::optional<bool>> field, std::string doc) {
  return boolean_or_word_key(std::move(path), std::move(field), std::move(doc), ConfigType::boolean_or_default,
                             "default");
}

ConfigKey boolean_or_auto_key(std::string path, Field<std::optional<bool>> field, std::string doc) {
  return boolean_or_word_key(std::move(path), std::move(field), std::move(doc), ConfigType::boolean_or_auto, "auto");
}

// A plugin's name or "auto" (nullopt).
ConfigKey name_or_auto_key(std::string path, Field<std::optional<std::string>> field, std::string doc) {
  ConfigKey k = key<std::string>(std::move(path), nullptr, std::move(doc));
  k.store = [field](Experiment& e, const ConfigValue& v) {
    const std::string& name = std::get<std::string>(v);
    field(e) = name == "auto" ? std::nullopt : std::optional(name);
  };
  k.default_text = [field](const Experiment& e) { return text(read(field, e).value_or("auto")); };
  return k;
}

// Marks a key as one that may change when a run is resumed.
ConfigKey resumable(ConfigKey k) {
  k.may_change_on_resume = true;
  return k;
}

}  // namespace plugtrain::schema
