#include "util/format.h"

#include <cstdio>

namespace plugtrain {

std::string shape_text(c10::IntArrayRef sizes) {
  std::string s;
  for (auto d : sizes) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

std::string fixed(double value, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, value);
  return buf;
}

std::string format_bytes(std::optional<std::uint64_t> bytes, const std::string& unknown) {
  if (!bytes) return unknown;
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(*bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return buf;
}

}  // namespace plugtrain
