// A checkpoint that cannot be used: missing, corrupt, of another run or model.
#pragma once

#include <string>

#include "util/error.h"

namespace plugtrain {

class CheckpointError : public Error {
 public:
  explicit CheckpointError(const std::string& message) : Error(message) {}
};

}  // namespace plugtrain
