// A problem in an experiment file or a --set override: one line that names where.
#pragma once

#include <stdexcept>
#include <string>

namespace plugtrain {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace plugtrain
