#include "plugins/cpu_fallbacks.h"

#include <algorithm>
#include <vector>

namespace plugtrain {

FallbackCounts fallbacks_between(const FallbackCounts& before, const FallbackCounts& after) {
  FallbackCounts ran;
  for (const auto& [op, calls] : after) {
    const auto earlier = before.find(op);
    const std::uint64_t previous = earlier == before.end() ? 0 : earlier->second;
    if (calls > previous) ran.emplace(op, calls - previous);
  }
  return ran;
}

std::string describe_fallbacks(const FallbackCounts& counts, std::size_t most) {
  if (counts.empty()) return "";
  std::vector<std::pair<std::string, std::uint64_t>> ranked(counts.begin(), counts.end());
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::uint64_t calls = 0;
  for (const auto& [op, n] : ranked) calls += n;
  std::string line = std::to_string(ranked.size()) + (ranked.size() == 1 ? " operator" : " operators") +
                     " ran on the CPU, " + std::to_string(calls) + (calls == 1 ? " call" : " calls") + " (most: ";
  for (std::size_t i = 0; i < std::min(most, ranked.size()); ++i)
    line += (i ? ", " : "") + ranked[i].first + " " + std::to_string(ranked[i].second);
  return line + ")";
}

}  // namespace plugtrain
