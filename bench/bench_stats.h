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

// The median over rounds of theirs[i] / ours[i] (one round's seconds each side): both figures of
// a round are taken seconds apart, so a shared machine that slows down or speeds up during the
// run moves both, and the ratio keeps what the medians of each side alone can lose. 0 when a
// side misses a round.
inline double paired_speedup(const std::vector<double>& ours, const std::vector<double>& theirs) {
  if (ours.empty() || ours.size() != theirs.size()) return 0;
  std::vector<double> ratios;
  for (std::size_t i = 0; i < ours.size(); ++i) ratios.push_back(ours[i] > 0 ? theirs[i] / ours[i] : 0);
  return median(ratios);
}

}  // namespace plugtrain::bench
