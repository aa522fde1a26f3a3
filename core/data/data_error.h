// The one error type of the data layer: a bad, missing or inconsistent data file. The
// message is a single line that names the file (or folder) it is about.
#pragma once

#include "util/error.h"

namespace plugtrain::data {

class DataError : public Error {
 public:
  explicit DataError(const std::string& message) : Error(message) {}
};

}  // namespace plugtrain::data
