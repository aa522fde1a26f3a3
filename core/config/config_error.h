// A problem in an experiment file or a --set override: one line that names where. Found
// before any work starts, so the command line exits with exit_bad_input.
#pragma once

#include "util/error.h"

namespace plugtrain {

class ConfigError : public Error {
 public:
  explicit ConfigError(const std::string& message) : Error(message, exit_bad_input) {}
};

}  // namespace plugtrain
