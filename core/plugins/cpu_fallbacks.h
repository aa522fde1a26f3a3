// Operators a backend ran on the CPU because its device has no kernel for them (SDK 3.4
// RuntimeCounts::cpu_fallbacks): the slowest way to train, and silent unless someone says it.
// run, doctor, bench and check-backend report them through these.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace plugtrain {

using FallbackCounts = std::map<std::string, std::uint64_t>;  // operator -> calls

// What ran between two readings of a backend's counts (they only grow).
FallbackCounts fallbacks_between(const FallbackCounts& before, const FallbackCounts& after);

// One line for a person, or "" when there were none: "12 operators ran on the CPU, 3410 calls
// (most: aten::addmm 600, aten::relu 400, aten::threshold_backward 400)".
std::string describe_fallbacks(const FallbackCounts& counts, std::size_t most = 3);

}  // namespace plugtrain
