#include "readers/bpe_tokenizer.h"

#include <cstdio>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace bundled_datasets {

namespace {

using json = nlohmann::json;

struct CodeRange {
  char32_t first, last;
};
#include "readers/bpe_tokenizer_unicode.inc"

// A tokenizer.json larger than this is not one (GPT-2's is 1.4 MB, Llama 3's 9 MB).
constexpr std::uintmax_t kMaxFileBytes = std::uintmax_t(256) << 20;

// The names in a message come from the file: a control character is written as \xNN and a long
// line is cut, so that a hostile file cannot write several lines or megabytes of message.
[[noreturn]] void fail(const std::string& line) {
  std::string one;
  for (const char c : line.substr(0, 1000)) {
    if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) {
      one += c;
      continue;
    }
    char hex[8];
    std::snprintf(hex, sizeof hex, "\\x%02x", unsigned(static_cast<unsigned char>(c)));
    one += hex;
  }
  throw std::runtime_error(line.size() > 1000 ? one + "..." : one);
}

template <std::size_t N>
bool in(const CodeRange (&table)[N], char32_t c) {
  const auto* it = std::upper_bound(table, table + N, c, [](char32_t v, const CodeRange& r) { return v < r.first; });
  return it != table && c <= (it - 1)->last;
}

enum class Kind : unsigned char { letter, number, space, other };

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

std::string read_bounded(const std::string& file) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(file, ec);
  if (ec) fail("'" + file + "': cannot be read (" + ec.message() + ")");
  if (size > kMaxFileBytes)
    fail("'" + file + "': " + std::to_string(size) + " bytes, too large for a tokenizer.json (at most 256 MiB)");
  std::ifstream in(file, std::ios::binary);
  std::string bytes(std::size_t(size), '\0');
  if (!in || !in.read(bytes.data(), std::streamsize(size))) fail("'" + file + "': cannot be read");
  return bytes;
}

std::string type_of(const json& part) {
  return part.is_object() && part.contains("type") && part["type"].is_string() ? part["type"].get<std::string>() : "?";
}

bool flag(const json& part, const char* key) {
  return part.contains(key) && part[key].is_boolean() && part[key].get<bool>();
}

}  // namespace

BpeTokenizer::BpeTokenizer(const std::string& file) : file_(file) {
  const std::string where = "'" + file + "'";
  json doc;
  try {
    doc = json::parse(read_bounded(file));
  } catch (const json::parse_error& e) {
    fail(where + ": not JSON (a syntax error at byte " + std::to_string(e.byte) +
         "), so not a Hugging Face tokenizer.json");
  } catch (const json::exception& e) { fail(where + ": not JSON that a tokenizer.json can be (" + e.what() + ")"); }
  if (!doc.is_object() || !doc.contains("model") || !doc["model"].is_object())
    fail(where + ": not a Hugging Face tokenizer.json (no \"model\" object)");
  const json& model = doc["model"];
  const std::string type = type_of(model);
  if (type != "BPE") fail(where + ": " + type + " is not supported (only a BPE model: byte-level, GPT-2's kind)");
  const json& pre = doc.value("pre_tokenizer", json());
  if (type_of(pre) != "ByteLevel")
    fail(where + ": the pre-tokenizer " + (pre.is_null() ? "null" : type_of(pre)) +
         " is not supported (only ByteLevel, GPT-2's)");
  if (pre.contains("use_regex") && !flag(pre, "use_regex"))
    fail(where + ": a ByteLevel pre-tokenizer without GPT-2's regex (use_regex false) is not supported");
  add_prefix_space_ = flag(pre, "add_prefix_space");
  for (const char* part : {"normalizer", "post_processor", "decoder"}) {
    const json& p = doc.value(part, json());
    if (!p.is_null() && !(std::string(part) != "normalizer" && type_of(p) == "ByteLevel"))
      fail(where + ": the " + part + " " + type_of(p) + " is not supported (byte-level BPE takes none, or ByteLevel)");
  }
  if (model.value("dropout", json()).is_number() && model["dropout"].get<double>() > 0)
    fail(where + ": BPE dropout is not supported (the ids of a text would change from one encode to the next)");
  for (const char* affix : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (model.value(affix, json()).is_string() && !model[affix].get<std::string>().empty())
      fail(where + ": a BPE " + affix + " is not supported (GPT-2's byte-level BPE has none)");
  ignore_merges_ = flag(model, "ignore_merges");
  if (!model.contains("vocab") || !model["vocab"].is_object() || model["vocab"].empty())
    fail(where + ": the BPE model has no vocab (an object of token -> id)");
  const json& added = doc.value("added_tokens", json::array());
  if (!added.is_array()) fail(where + ": added_tokens is not a list");

  // Ids run 0..count-1 with no more ids than entries, so the tables are bounded by the file.
  const std::size_t count = model["vocab"].size() + added.size();
  std::vector<bool> seen(count, false);
  token_bytes_.assign(count, std::string());
  auto claim = [&](const json& id, const std::string& what) -> std::int32_t {
    if (!id.is_number_integer() || id.get<std::int64_t>() < 0 || id.get<std::int64_t>() >= std::int64_t(count))
      fail(where + ": " + what + " has id " + id.dump(-1, ' ', false, json::error_handler_t::replace) +
           ", outside 0.." + std::to_string(count - 1) + " (one id per vocab entry and added token)");
    seen[id.get<std::size_t>()] = true;
    return id.get<std::int32_t>();
  };
  std::unordered_map<char32_t, unsigned char> byte_of;
  const std::array<char32_t, 256> unicode = byte_to_unicode();
  for (int b = 0; b < 256; ++b) byte_of[unicode[std::size_t(b)]] = static_cast<unsigned char>(b);
  std::unordered_map<std::string, std::int32_t> id_of;  // the token's text as the file writes it
  id_of.reserve(model["vocab"].size());
  for (const auto& [token, id] : model["vocab"].items()) {
    const std::int32_t i = claim(id, "vocab token \"" + token + "\"");
    id_of[token] = i;
    std::string bytes;
    const auto* p = reinterpret_cast<const unsigned char*>(token.data());
    for (std::size_t k = 0; k < token.size();) {
      char32_t c = 0;
      k += next_code_point(p, token.size(), k, c);
      const auto it = byte_of.find(c);
      if (it == byte_of.end())
        fail(where + ": vocab token \"" + token + "\" is not byte-level (a character outside GPT-2's byte alphabet)");
      bytes += char(it->second);
    }
    token_bytes_[std::size_t(i)] = bytes;
    if (ignore_merges_) by_bytes_[bytes] = i;
  }
  for (int b = 0; b < 256; ++b) {
    std::string name;
    const char32_t c = unicode[std::size_t(b)];
    name = c < 0x80 ? std::string(1, char(c))
                    : std::string{char(0xC0 | (c >> 6)), char(0x80 | (c & 0x3F))};  // all below 0x800
    const auto it = id_of.find(name);
    if (it == id_of.end())
      fail(where + ": the vocab has no token for byte " + std::to_string(b) + " (a byte-level BPE needs all 256)");
    byte_id_[std::size_t(b)] = it->second;
  }

  const json& merges = model.value("merges", json::array());
  if (!merges.is_array()) fail(where + ": the BPE merges are not a list");
  merges_.reserve(merges.size());
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    const json& m = merges[rank];
    std::string left, right;
    if (m.is_string() && m.get<std::string>().find(' ') != std::string::npos) {
      const std::string s = m.get<std::string>();
      left = s.substr(0, s.find(' '));
      right = s.substr(s.find(' ') + 1);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      left = m[0].get<std::string>();
      right = m[1].get<std::string>();
    } else {
      fail(where + ": merge " + std::to_string(rank) + " is " + m.dump(-1, ' ', false, json::error_handler_t::replace) +
           ", neither \"a b\" nor [\"a\", \"b\"]");
    }
    for (const std::string& token : {left, right, left + right})
      if (!id_of.count(token))
        fail(where + ": merge " + std::to_string(rank) + " (\"" + left + " " + right + "\") names \"" + token +
             "\", which is not in the vocab");
    const std::uint64_t key = (std::uint64_t(std::uint32_t(id_of[left])) << 32) | std::uint32_t(id_of[right]);
    merges_[key] = Merge{std::int32_t(rank), id_of[left + right]};  // a pair listed twice: the last, as Python's
  }

  for (const json& a : added) {
    if (!a.is_object() || !a.contains("content") || !a["content"].is_string() ||
        a["content"].get<std::string>().empty())
      fail(where + ": an added token without its content (text)");
    Added token{a["content"].get<std::string>(),
                claim(a.value("id", json()),
                      "added token " + a["content"].dump(-1, ' ', false, json::error_handler_t::replace)),
                flag(a, "lstrip"), flag(a, "rstrip"), flag(a, "single_word")};
    token_bytes_[std::size_t(token.id)] = token.content;
    added_.push_back(token);
  }
  std::stable_sort(added_.begin(), added_.end(),
                   [](const Added& a, const Added& b) { return a.content.size() > b.content.size(); });
  // Ids without a token (more entries than distinct ids) are cut from the end; a hole inside stays empty.
  while (!token_bytes_.empty() && !seen[token_bytes_.size() - 1]) token_bytes_.pop_back();
}

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

std::string BpeTokenizer::decode(const std::vector<std::int64_t>& ids) const {
  std::string text;
  for (std::int64_t id : ids) {
    if (id < 0 || id >= size())
      fail("'" + file_ + "': cannot decode id " + std::to_string(id) + ", outside 0.." + std::to_string(size() - 1));
    text += token_bytes_[std::size_t(id)];
  }
  return text;
}

}  // namespace bundled_datasets
