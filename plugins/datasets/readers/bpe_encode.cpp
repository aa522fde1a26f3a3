#include "readers/bpe_tokenizer.h"

#include <climits>

#include "readers/bpe_symbols.h"

// Encoding with a read tokenizer (readers/bpe_tokenizer.h): added tokens split out first, then
// GPT-2's pre-tokenizer pattern, then each word through the merges by rank.
namespace bundled_datasets {

using bpe::Kind;
using bpe::kind_of;
using bpe::next_code_point;

std::vector<std::int64_t> BpeTokenizer::encode(const std::string& text) const {
  std::unordered_map<std::string, std::vector<std::int32_t>> cache;
  std::vector<std::int64_t> out;
  out.reserve(text.size() / 3);
  auto word_byte = [&](std::size_t i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    return c < 0x80 && (kind_of(c) == Kind::letter || kind_of(c) == Kind::number || c == '_');
  };
  auto space_byte = [&](std::size_t i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    return c < 0x80 && kind_of(c) == Kind::space;
  };
  std::size_t start = 0;  // the text since the last added token
  for (std::size_t i = 0; i < text.size() && !added_.empty();) {
    const Added* hit = nullptr;
    for (const Added& a : added_)  // longest first: the leftmost-longest match, as Python's
      if (text.compare(i, a.content.size(), a.content) == 0 &&
          (!a.single_word || ((i == 0 || !word_byte(i - 1)) &&
                              (i + a.content.size() == text.size() || !word_byte(i + a.content.size()))))) {
        hit = &a;
        break;
      }
    if (!hit) {
      ++i;
      continue;
    }
    std::size_t begin = i, end = i + hit->content.size();
    while (hit->lstrip && begin > start && space_byte(begin - 1)) --begin;
    while (hit->rstrip && end < text.size() && space_byte(end)) ++end;
    encode_chunk(text, start, begin, cache, out);
    out.push_back(hit->id);
    start = i = end;
  }
  encode_chunk(text, start, text.size(), cache, out);
  return out;
}

// One stretch between added tokens, split by GPT-2's pattern
// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// (the first alternative that matches wins), then each piece through the merges.
void BpeTokenizer::encode_chunk(const std::string& text, std::size_t begin, std::size_t end,
                                std::unordered_map<std::string, std::vector<std::int32_t>>& cache,
                                std::vector<std::int64_t>& out) const {
  if (begin >= end) return;
  std::string chunk = text.substr(begin, end - begin);
  if (add_prefix_space_ && chunk[0] != ' ') chunk.insert(chunk.begin(), ' ');
  std::vector<char32_t> cps;
  std::vector<Kind> kinds;
  std::vector<std::size_t> at;  // each code point's byte offset, and the chunk's end
  const auto* p = reinterpret_cast<const unsigned char*>(chunk.data());
  for (std::size_t i = 0; i < chunk.size();) {
    char32_t c = 0;
    const std::size_t len = next_code_point(p, chunk.size(), i, c);
    cps.push_back(c);
    kinds.push_back(kind_of(c));
    at.push_back(i);
    i += len;
  }
  at.push_back(chunk.size());
  const std::size_t n = cps.size();
  auto run = [&](std::size_t k, Kind kind) {
    while (k < n && kinds[k] == kind) ++k;
    return k;
  };
  for (std::size_t k = 0; k < n;) {
    std::size_t e = k;
    const bool space_then = cps[k] == ' ' && k + 1 < n && kinds[k + 1] != Kind::space;
    if (cps[k] == '\'' && k + 1 < n &&
        (cps[k + 1] == 's' || cps[k + 1] == 't' || cps[k + 1] == 'm' || cps[k + 1] == 'd')) {
      e = k + 2;
    } else if (cps[k] == '\'' && k + 2 < n &&
               ((cps[k + 1] == 'r' && cps[k + 2] == 'e') || (cps[k + 1] == 'v' && cps[k + 2] == 'e') ||
                (cps[k + 1] == 'l' && cps[k + 2] == 'l'))) {
      e = k + 3;
    } else if (space_then) {
      e = run(k + 1, kinds[k + 1]);  // " ?\p{L}+", " ?\p{N}+" or " ?[^\s\p{L}\p{N}]+" with its space
    } else if (kinds[k] != Kind::space) {
      e = run(k, kinds[k]);
    } else {
      e = run(k, Kind::space);  // \s+(?!\S): all but the last space before a non-space, else \s+
      if (e < n && e - k > 1) --e;
    }
    const std::string word = chunk.substr(at[k], at[e] - at[k]);
    for (std::int32_t id : encode_word(word, cache)) out.push_back(id);
    k = e;
  }
}

// The classic loop: merge the pair of lowest rank (every occurrence, left to right) until none is left.
const std::vector<std::int32_t>& BpeTokenizer::encode_word(
    const std::string& word, std::unordered_map<std::string, std::vector<std::int32_t>>& cache) const {
  const auto cached = cache.find(word);
  if (cached != cache.end()) return cached->second;
  std::vector<std::int32_t> symbols;
  const auto whole = ignore_merges_ ? by_bytes_.find(word) : by_bytes_.end();
  if (whole != by_bytes_.end()) symbols.push_back(whole->second);
  if (symbols.empty())
    for (char b : word) symbols.push_back(byte_id_[static_cast<unsigned char>(b)]);
  auto merge_of = [&](std::size_t i) {
    const auto it = merges_.find((std::uint64_t(std::uint32_t(symbols[i])) << 32) | std::uint32_t(symbols[i + 1]));
    return it == merges_.end() ? Merge{INT32_MAX, -1} : it->second;
  };
  while (symbols.size() > 1) {
    Merge best{INT32_MAX, -1};
    std::size_t first = 0;
    for (std::size_t i = 0; i + 1 < symbols.size(); ++i) {
      const Merge m = merge_of(i);
      if (m.rank < best.rank) best = m, first = i;
    }
    if (best.id < 0) break;
    const std::int32_t left = symbols[first], right = symbols[first + 1];
    std::size_t w = first;
    for (std::size_t r = first; r < symbols.size(); ++w) {
      const bool pair = r + 1 < symbols.size() && symbols[r] == left && symbols[r + 1] == right;
      symbols[w] = pair ? best.id : symbols[r];
      r += pair ? 2 : 1;
    }
    symbols.resize(w);
  }
  return cache.emplace(word, std::move(symbols)).first->second;
}

}  // namespace bundled_datasets
