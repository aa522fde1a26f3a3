// Small formatting helpers for people-facing output.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <c10/util/ArrayRef.h>

namespace plugtrain {

// A tensor's sizes as people write them: {60000, 28, 28} -> "60000x28x28".
std::string shape_text(c10::IntArrayRef sizes);

// 0.12345, 2 -> "0.12": a number with a fixed count of decimals.
std::string fixed(double value, int digits);

// 1536 -> "1.5 KiB"; nullopt -> `unknown`.
std::string format_bytes(std::optional<std::uint64_t> bytes, const std::string& unknown = "unknown");

}  // namespace plugtrain
