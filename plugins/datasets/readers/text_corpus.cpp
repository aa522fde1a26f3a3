#include "readers/text_corpus.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "readers/bpe_tokenizer.h"
#include "readers/sentencepiece_tokenizer.h"
#include "readers/token_cache.h"
#include "readers/token_windows.h"

namespace bundled_datasets {

namespace {

namespace fs = std::filesystem;
using plugtrain::DatasetQuery;
using plugtrain::DatasetRead;
using plugtrain::Options;

[[noreturn]] void fail(const std::string& line) { throw std::runtime_error(line); }

// The whole file; gzread passes a plain file through unchanged.
std::string read_file_bytes(const std::string& path) {
  std::unique_ptr<gzFile_s, int (*)(gzFile)> file(gzopen(path.c_str(), "rb"), gzclose);
  if (!file) fail("'" + path + "': cannot be opened");
  std::string bytes;
  char chunk[1 << 16];
  for (;;) {
    const int got = gzread(file.get(), chunk, sizeof chunk);
    if (got < 0) {
      int errnum = 0;
      fail("'" + path + "': " + gzerror(file.get(), &errnum));
    }
    if (got == 0) break;
    bytes.append(chunk, std::size_t(got));
  }
  return bytes;
}

std::string utf8_of(char32_t c) {
  std::string s;
  if (c < 0x80) {
    s += char(c);
  } else if (c < 0x800) {
    s += char(0xC0 | (c >> 6));
    s += char(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    s += char(0xE0 | (c >> 12));
    s += char(0x80 | ((c >> 6) & 0x3F));
    s += char(0x80 | (c & 0x3F));
  } else {
    s += char(0xF0 | (c >> 18));
    s += char(0x80 | ((c >> 12) & 0x3F));
    s += char(0x80 | ((c >> 6) & 0x3F));
    s += char(0x80 | (c & 0x3F));
  }
  return s;
}

// The text's code points; a NUL byte or a byte sequence that is not UTF-8 says the file is not
// text, with its offset.
std::vector<char32_t> code_points(const std::string& bytes, const std::string& path) {
  std::vector<char32_t> out;
  out.reserve(bytes.size());
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const std::size_t n = bytes.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned char b = p[i];
    const int extra = b < 0x80 ? 0 : (b >> 5) == 0x6 ? 1 : (b >> 4) == 0xE ? 2 : (b >> 3) == 0x1E ? 3 : -1;
    bool ok = b != 0 && extra >= 0;
    char32_t c = extra == 0 ? b : extra == 1 ? (b & 0x1F) : extra == 2 ? (b & 0x0F) : (b & 0x07);
    for (int k = 1; ok && k <= extra; ++k) {
      ok = i + std::size_t(k) < n && (p[i + k] & 0xC0) == 0x80;
      if (ok) c = (c << 6) | (p[i + k] & 0x3F);
    }
    if (!ok) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", unsigned(b));
      fail("'" + path + "' is not UTF-8 text (byte " + hex + " at offset " + std::to_string(i) +
           "): a binary file? Give data.path a text file, or use [dataset] vocabulary = \"byte\"");
    }
    out.push_back(c);
    i += std::size_t(extra) + 1;
  }
  return out;
}

at::Tensor ids_tensor(const std::vector<std::int64_t>& ids) {
  return at::tensor(ids, at::TensorOptions().dtype(at::kLong));
}

// The last `fraction` of the stream is the val split (nanoGPT's prepare.py: the first 90% trains).
std::size_t split_point(std::size_t length, double val_fraction) {
  return std::size_t(double(length) * (1.0 - val_fraction));
}

}  // namespace

std::vector<std::string> byte_vocabulary() {
  std::vector<std::string> names;
  for (int b = 0; b < 256; ++b) {
    if ((b >= 0x20 && b < 0x7F) || b == '\n' || b == '\t') {
      names.emplace_back(1, char(b));
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "<0x%02X>", b);
      names.emplace_back(hex);
    }
  }
  return names;
}

DatasetRead read_text(const DatasetQuery& query, const Options& options) {
  const std::string path = query.path();
  const std::string bytes = read_file_bytes(path);
  if (bytes.empty()) fail("'" + path + "' is empty: there is no text to learn");
  const bool by_byte = options.string("vocabulary") == "byte";
  const bool by_subword = options.string("vocabulary") == "bpe" || options.string("vocabulary") == "sentencepiece";
  const double val_fraction = options.real("val_fraction");
  std::vector<std::int64_t> train, val;
  at::Tensor train_ids, val_ids;
  std::vector<std::string> names;
  std::string vocabulary_note, tokenizer_file;
  if (by_byte) {
    const std::size_t cut = split_point(bytes.size(), val_fraction);
    for (std::size_t i = 0; i < bytes.size(); ++i)
      (i < cut ? train : val).push_back(std::int64_t(static_cast<unsigned char>(bytes[i])));
    names = byte_vocabulary();
    vocabulary_note = "vocabulary: 256 bytes";
  } else if (by_subword) {
    std::size_t cut = split_point(bytes.size(), val_fraction);  // at a character's start
    while (cut > 0 && (static_cast<unsigned char>(bytes[cut]) & 0xC0) == 0x80) --cut;
    SubwordStreams s = subword_streams(path, bytes, cut, options);
    names = std::move(s.names), vocabulary_note = std::move(s.note), tokenizer_file = std::move(s.tokenizer_file);
    train_ids = s.train, val_ids = s.val;
  } else {
    const std::vector<char32_t> text = code_points(bytes, path);
    const std::size_t cut = split_point(text.size(), val_fraction);
    std::vector<char32_t> chars(text.begin(), text.begin() + std::ptrdiff_t(cut));
    std::sort(chars.begin(), chars.end());
    chars.erase(std::unique(chars.begin(), chars.end()), chars.end());
    std::int64_t dropped = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
      const auto it = std::lower_bound(chars.begin(), chars.end(), text[i]);
      if (it == chars.end() || *it != text[i]) {
        ++dropped;  // only in the val split: the vocabulary is the training split's
        continue;
      }
      (i < cut ? train : val).push_back(std::int64_t(it - chars.begin()));
    }
    for (char32_t c : chars) names.push_back(utf8_of(c));
    vocabulary_note = "vocabulary: " + std::to_string(chars.size()) + " characters of the training split" +
                      (dropped ? "; " + std::to_string(dropped) + " val characters outside it left out" : "");
  }
  if (!by_subword) train_ids = ids_tensor(train), val_ids = ids_tensor(val);
  DatasetRead read = windows_read(train_ids, val_ids, options, "'" + path + "'");
  read.num_classes = std::int64_t(names.size());
  read.class_names = names;
  read.source = "text from " + path + " (" + std::to_string(train_ids.numel()) + " training and " +
                std::to_string(val_ids.numel()) + " val tokens)";
  read.notes.push_back(vocabulary_note);
  read.tokenizer_file = tokenizer_file;
  return read;
}

void check_text_path(const DatasetQuery& query) {
  std::error_code ec;
  if (!fs::is_regular_file(query.path(), ec))
    fail("data.path '" + query.path() + "' is not a file (the text data set reads one UTF-8 text file, plain or .gz)");
}

void check_text_tokenizer(const Options& options) {
  if (options.string("vocabulary") == "sentencepiece") {
    const bool named = !options.string("tokenizer").empty(), trained = !options.string("train_tokenizer").empty();
    if (named == trained)
      fail(
          "[dataset] vocabulary = \"sentencepiece\" takes either tokenizer = \"m.model\" (a SentencePiece model) or "
          "train_tokenizer = \"bpe\" or \"unigram\" (one trained on the training split), " +
          std::string(named ? "not both" : "and neither is set"));
    if (named) SentencePieceTokenizer{options.string("tokenizer")};  // refused here, before any text is read
    return;
  }
  if (!options.string("train_tokenizer").empty())
    fail("[dataset] train_tokenizer trains a SentencePiece model: it needs vocabulary = \"sentencepiece\"");
  if (options.string("vocabulary") != "bpe") return;
  if (options.string("tokenizer").empty())
    fail(
        "[dataset] vocabulary = \"bpe\" needs [dataset] tokenizer = \"path/tokenizer.json\" (a Hugging Face "
        "byte-level BPE tokenizer, GPT-2's kind)");
  BpeTokenizer{options.string("tokenizer")};  // refused here, in one line, before any text is read
}

}  // namespace bundled_datasets
