// Small helpers shared by the benchmark programs.
#pragma once

#include <algorithm>
#include <vector>

namespace plugtrain::bench {

// The middle value of repeated runs (0 for none): robust to one run hit by machine noise.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace plugtrain::bench
