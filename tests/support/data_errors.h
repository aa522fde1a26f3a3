// The message of the DataError a piece of data-layer code throws. Header-only.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "data/data_error.h"

namespace plugtrain::testing {

// Message of the DataError fn throws (fails the test when it throws none).
template <class Fn>
std::string data_error_of(Fn&& fn) {
  try {
    fn();
  } catch (const data::DataError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no DataError thrown";
  return {};
}

}  // namespace plugtrain::testing
