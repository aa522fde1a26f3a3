#include "readers/bpe_symbols.h"

#include <algorithm>

namespace bundled_datasets::bpe {

namespace {

struct CodeRange {
  char32_t first, last;
};
#include "readers/bpe_tokenizer_unicode.inc"

template <std::size_t N>
bool in(const CodeRange (&table)[N], char32_t c) {
  const auto* it = std::upper_bound(table, table + N, c, [](char32_t v, const CodeRange& r) { return v < r.first; });
  return it != table && c <= (it - 1)->last;
}

}  // namespace

Kind kind_of(char32_t c) {
  if (c < 0x80) {
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return Kind::letter;
    if (c >= '0' && c <= '9') return Kind::number;
    return (c == ' ' || (c >= 0x09 && c <= 0x0D)) ? Kind::space : Kind::other;
  }
  if (in(kLetters, c)) return Kind::letter;
  if (in(kNumbers, c)) return Kind::number;
  return in(kSpaces, c) ? Kind::space : Kind::other;
}

// The code point at p[i] and its length; a byte that starts no UTF-8 sequence is one symbol.
std::size_t next_code_point(const unsigned char* p, std::size_t n, std::size_t i, char32_t& c) {
  const unsigned char b = p[i];
  const int extra = b < 0x80 ? 0 : (b >> 5) == 0x6 ? 1 : (b >> 4) == 0xE ? 2 : (b >> 3) == 0x1E ? 3 : -1;
  c = extra <= 0 ? b : extra == 1 ? (b & 0x1F) : extra == 2 ? (b & 0x0F) : (b & 0x07);
  if (extra < 0) return c = 0xFFFD, 1;
  for (int k = 1; k <= extra; ++k) {
    if (i + std::size_t(k) >= n || (p[i + k] & 0xC0) != 0x80) return c = 0xFFFD, 1;
    c = (c << 6) | (p[i + k] & 0x3F);
  }
  return std::size_t(extra) + 1;
}

// GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the others for 256 + n.
std::array<char32_t, 256> byte_to_unicode() {
  std::array<char32_t, 256> map{};
  char32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    map[std::size_t(b)] = printable ? char32_t(b) : next++;
  }
  return map;
}

}  // namespace bundled_datasets::bpe
