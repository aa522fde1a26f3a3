#include "readers/tokenizer_files.h"

#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "readers/bpe_tokenizer.h"
#include "readers/sentencepiece_tokenizer.h"

namespace bundled_datasets {

namespace {

class BpeFile final : public plugtrain::Tokenizer {
 public:
  explicit BpeFile(const std::string& file) : bpe_(file) {}
  std::int64_t size() const override { return bpe_.size(); }
  std::vector<std::int64_t> encode(const std::string& text) const override { return bpe_.encode(text); }
  std::string decode(const std::vector<std::int64_t>& ids) const override { return bpe_.decode(ids); }
  std::string piece(std::int64_t id) const override { return token_name(bpe_.token_texts().at(std::size_t(id))); }

 private:
  BpeTokenizer bpe_;
};

class SentencePieceFile final : public plugtrain::Tokenizer {
 public:
  explicit SentencePieceFile(const std::string& file) : model_(file), pieces_(model_.piece_texts()) {}
  std::int64_t size() const override { return model_.size(); }
  std::vector<std::int64_t> encode(const std::string& text) const override { return model_.encode(text); }
  std::string decode(const std::vector<std::int64_t>& ids) const override { return model_.decode(ids); }
  std::string piece(std::int64_t id) const override { return pieces_.at(std::size_t(id)); }

 private:
  SentencePieceTokenizer model_;
  std::vector<std::string> pieces_;
};

// A tokenizer.json is a JSON object; a SentencePiece model is a protobuf, which never starts with '{'.
bool starts_like_json(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("'" + file + "': cannot be opened");
  char c = 0;
  while (in.get(c))
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return c == '{';
  throw std::runtime_error("'" + file + "': empty, not a tokenizer (a tokenizer.json or a SentencePiece .model)");
}

}  // namespace

std::unique_ptr<plugtrain::Tokenizer> open_tokenizer(const std::string& file) {
  return starts_like_json(file) ? open_bpe_tokenizer(file) : open_sentencepiece_tokenizer(file);
}

std::unique_ptr<plugtrain::Tokenizer> open_bpe_tokenizer(const std::string& file) {
  return std::make_unique<BpeFile>(file);
}

std::unique_ptr<plugtrain::Tokenizer> open_sentencepiece_tokenizer(const std::string& file) {
  return std::make_unique<SentencePieceFile>(file);
}

std::string token_name(const std::string& bytes) {
  std::string name;
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  for (std::size_t i = 0; i < bytes.size();) {
    const unsigned char b = p[i];
    const std::size_t extra = b < 0x80 ? 0 : (b >> 5) == 0x6 ? 1 : (b >> 4) == 0xE ? 2 : (b >> 3) == 0x1E ? 3 : 9;
    bool whole = extra < 4 && i + extra < bytes.size();
    for (std::size_t k = 1; whole && k <= extra; ++k) whole = (p[i + k] & 0xC0) == 0x80;
    if (whole) {
      name.append(bytes, i, extra + 1);
      i += extra + 1;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "<0x%02X>", unsigned(b));
      name += hex;
      ++i;
    }
  }
  return name;
}

}  // namespace bundled_datasets
