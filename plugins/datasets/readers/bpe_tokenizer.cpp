#include "readers/bpe_tokenizer.h"

#include <cstdio>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "readers/bpe_symbols.h"

// Reading a tokenizer.json: its BPE model, pre-tokenizer, decoder and added tokens, checked as
// they are read (encoding is readers/bpe_encode.cpp).
namespace bundled_datasets {

namespace {

using json = nlohmann::json;
using bpe::byte_to_unicode;
using bpe::next_code_point;

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
