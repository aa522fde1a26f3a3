// The one error type of the data layer: a bad, missing or inconsistent data file. The
// message is a single line that names the file (or folder) it is about.
#pragma once

#include <stdexcept>
#include <string>

namespace plugtrain::data {

class DataError : public std::runtime_error {
 public:
  explicit DataError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace plugtrain::data
