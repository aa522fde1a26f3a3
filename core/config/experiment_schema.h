// Every key an experiment file may hold: type, default (from Experiment's initialisers),
// documentation, a range check, and where the value goes. docs/experiment.md lists the
// same keys; a test keeps the two in step.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "config/experiment.h"
#include "util/result.h"

namespace plugtrain {

// count_or_auto: a positive integer or the string "auto", stored as an integer (0 for "auto").
enum class ConfigType { integer, real, boolean, string, integer_list, real_list, string_list, count_or_auto,
                        boolean_or_default, boolean_or_auto };
const char* to_string(ConfigType t);

using ConfigValue = std::variant<std::int64_t, double, bool, std::string, std::vector<std::int64_t>,
                                 std::vector<double>, std::vector<std::string>>;

struct ConfigKey {
  std::string path;  // "optim.lr"
  ConfigType type;
  std::string doc;
  // Fine when the value is acceptable, else refused with what is wrong ("must be > 0"); may be empty.
  std::function<Status(const ConfigValue&)> check;
  std::function<void(Experiment&, const ConfigValue&)> store;
  std::function<std::string(const Experiment&)> default_text;
  // The key may differ between a run and its resumption (how long, where, how verbose, on what
  // hardware); any other change would make the resumed run a different run, so it is refused.
  bool may_change_on_resume = false;
};

const std::vector<ConfigKey>& experiment_schema();
const std::vector<std::string>& experiment_tables();  // "experiment", "backend", ...

}  // namespace plugtrain
