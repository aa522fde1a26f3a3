#include "config/toml_text.h"

#include <cstdio>
#include <sstream>
#include <type_traits>

namespace plugtrain {

std::string toml_text(const OptionValue& value) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        std::ostringstream out;
        if constexpr (std::is_same_v<T, bool>) {
          out << (x ? "true" : "false");
        } else if constexpr (std::is_same_v<T, std::string>) {
          out << toml_quoted(x);
        } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>> || std::is_same_v<T, std::vector<double>>) {
          out << "[";
          for (std::size_t i = 0; i < x.size(); ++i) out << (i ? ", " : "") << x[i];
          out << "]";
        } else {
          out << x;
        }
        return out.str();
      },
      value);
}

// TOML basic strings allow no control characters but tab: every other one is escaped, so any
// value a user gave (a name with a quote, a path with a backslash) reads back as it was.
std::string toml_quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += std::string("\\") + c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7F) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04X", u);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string toml_text(const toml::node& node) {
  if (auto v = node.as_string()) return toml_quoted(v->get());
  if (auto v = node.as_integer()) return std::to_string(v->get());
  if (auto v = node.as_boolean()) return v->get() ? "true" : "false";
  if (auto v = node.as_floating_point()) {
    std::ostringstream out;
    out.precision(15);
    out << v->get();
    std::string text = out.str();
    if (text.find_first_of(".eEn") == std::string::npos) text += ".0";  // stays a float
    return text;
  }
  if (auto a = node.as_array()) {
    std::string out = "[";
    for (std::size_t i = 0; i < a->size(); ++i) out += (i ? ", " : "") + toml_text((*a)[i]);
    return out + "]";
  }
  std::ostringstream out;
  node.visit([&](const auto& v) { out << v; });
  return out.str();
}

}  // namespace plugtrain
