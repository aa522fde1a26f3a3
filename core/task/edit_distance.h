// Levenshtein distance between two sequences: the fewest insertions, deletions and
// substitutions that turn one into the other (the numerator of CER and WER).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace plugtrain {

template <class T>
std::int64_t edit_distance(const std::vector<T>& a, const std::vector<T>& b) {
  std::vector<std::int64_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = std::int64_t(j);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::int64_t diagonal = row[0];  // row i-1, column j-1
    row[0] = std::int64_t(i);
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::int64_t above = row[j];
      row[j] = std::min({above + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace plugtrain
