#include "util/text.h"

#include <cctype>
#include <cstdio>

namespace plugtrain {

std::string join(const std::vector<std::string>& items, const std::string& separator, const std::string& if_empty) {
  if (items.empty()) return if_empty;
  std::string out = items.front();
  for (std::size_t i = 1; i < items.size(); ++i) out += separator + items[i];
  return out;
}

std::string first_line(const std::string& message) { return message.substr(0, message.find('\n')); }

std::string shortened(const std::string& text, std::size_t limit) {
  if (text.size() <= limit) return text;
  const std::size_t head = limit * 2 / 3, tail = limit / 3;
  return text.substr(0, head) + " ... (" + std::to_string(text.size() - head - tail) + " characters cut) ... " +
         text.substr(text.size() - tail);
}

std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::uint64_t fnv1a_64(const std::string& text) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string printable(const std::string& text, std::size_t limit) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size() && out.size() < limit) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t length = c < 0x80                ? 1
                         : c >= 0xc2 && c < 0xe0 ? 2
                         : c >= 0xe0 && c < 0xf0 ? 3
                         : c >= 0xf0 && c < 0xf5 ? 4
                                                 : 0;
    for (std::size_t k = 1; k < length; ++k)
      if (i + k >= text.size() || (static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) length = 0;
    const bool control =
        c < 0x20 || c == 0x7f || (c == 0xc2 && length == 2 && static_cast<unsigned char>(text[i + 1]) < 0xa0);
    if (length == 0 || control) {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
      i += 1;
    } else {
      out.append(text, i, length);
      i += length;
    }
  }
  return i < text.size() ? out + "..." : out;
}

std::string token_bytes(const std::string& name) {
  std::string bytes;
  bytes.reserve(name.size());
  const auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  for (std::size_t i = 0; i < name.size();) {
    if (i + 6 <= name.size() && name.compare(i, 3, "<0x") == 0 && hex(name[i + 3]) && hex(name[i + 4]) &&
        name[i + 5] == '>') {
      bytes += char(std::stoi(name.substr(i + 3, 2), nullptr, 16));
      i += 6;
    } else {
      bytes += name[i++];
    }
  }
  return bytes;
}

}  // namespace plugtrain
