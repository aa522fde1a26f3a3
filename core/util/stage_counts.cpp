#include "util/stage_counts.h"

#include <array>
#include <atomic>

namespace plugtrain {

namespace {

constexpr std::array<const char*, 4> stage_names{"validations", "plugin_hosts", "data_loads", "trainer_builds"};

std::array<std::atomic<std::int64_t>, stage_names.size()>& counters() {
  static std::array<std::atomic<std::int64_t>, stage_names.size()> counts{};
  return counts;
}

}  // namespace

void count_stage(Stage stage) { counters()[static_cast<std::size_t>(stage)].fetch_add(1, std::memory_order_relaxed); }

std::map<std::string, std::int64_t> stage_counts() {
  std::map<std::string, std::int64_t> counts;
  for (std::size_t i = 0; i < stage_names.size(); ++i) counts[stage_names[i]] = counters()[i].load();
  return counts;
}

std::map<std::string, std::int64_t> stage_counts_between(const std::map<std::string, std::int64_t>& earlier,
                                                         const std::map<std::string, std::int64_t>& later) {
  std::map<std::string, std::int64_t> counts;
  for (const auto& [name, count] : later) {
    const auto before = earlier.find(name);
    counts[name] = count - (before == earlier.end() ? 0 : before->second);
  }
  return counts;
}

}  // namespace plugtrain
