// Small formatting helpers for people-facing output.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace plugtrain {

// 1536 -> "1.5 KiB"; nullopt -> `unknown`.
std::string format_bytes(std::optional<std::uint64_t> bytes, const std::string& unknown = "unknown");

}  // namespace plugtrain
