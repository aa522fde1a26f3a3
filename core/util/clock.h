// The monotonic clock every duration of a run is measured with, and seconds since a point of it.
#pragma once

#include <chrono>

namespace plugtrain {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace plugtrain
