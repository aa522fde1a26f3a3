// The symbols GPT-2's byte-level BPE works on (readers/bpe_tokenizer.h): UTF-8 code points, the
// Unicode classes its pre-tokenizer pattern asks about (\p{L}, \p{N}, \s, from Oniguruma's
// tables), and the byte-to-unicode mapping its vocabularies are written in.
#pragma once

#include <array>
#include <cstddef>

namespace bundled_datasets::bpe {

enum class Kind : unsigned char { letter, number, space, other };

// The class GPT-2's pattern sees: a letter, a number, a space, or anything else.
Kind kind_of(char32_t c);

// The code point at p[i] (of n bytes) and its length; a byte that starts no UTF-8 sequence is
// one symbol (U+FFFD, length 1).
std::size_t next_code_point(const unsigned char* p, std::size_t n, std::size_t i, char32_t& c);

// GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the others for 256 + n.
std::array<char32_t, 256> byte_to_unicode();

}  // namespace bundled_datasets::bpe
