// A problem in an experiment file or a --set override: one line that names where. Found
// before any work starts, so the command line exits with exit_bad_input.
#pragma once

#include "util/error.h"

namespace plugtrain {

class ConfigError : public Error {
 public:
  explicit ConfigError(const std::string& message) : Error(message, exit_bad_input) {}
  // A problem with one key ("task.class_weights") found by code that does not have the file: the
  // message is "<key>: <why>", and a caller that has the file puts the key's place first.
  ConfigError(const std::string& key, const std::string& why) : Error(key + ": " + why, exit_bad_input), key_(key), why_(why) {}

  const std::string& key() const { return key_; }  // empty when the message says where itself
  const std::string& why() const { return why_; }

 private:
  std::string key_, why_;
};

}  // namespace plugtrain
