// GPT-2's byte-level BPE, read from a Hugging Face tokenizer.json by our own small reader (no
// C++ library for it is packaged): the BPE model's vocab and merges (the "a b" strings and the
// [["a", "b"]] lists newer files write), the ByteLevel pre-tokenizer (GPT-2's regex, scanned by
// hand over Oniguruma's Unicode classes, and the byte-to-unicode mapping), added tokens such as
// <|endoftext|> split out before pre-tokenization, and decode back to bytes. Parity with Python's
// tokenizers: tests/data/bpe_tokenizer_test.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace bundled_datasets {

class BpeTokenizer {
 public:
  // Throws std::runtime_error, one line naming `file`: unreadable, not JSON, not a tokenizer, a
  // model other than BPE ("WordPiece is not supported"), a pre-tokenizer other than ByteLevel, a
  // merge naming a token outside the vocab.
  explicit BpeTokenizer(const std::string& file);

  // Python's Tokenizer.encode(text).ids for `text` (UTF-8; a byte that is not UTF-8 is a symbol of
  // its own, so any bytes encode). Thread-safe: the per-word cache lives for one call.
  std::vector<std::int64_t> encode(const std::string& text) const;
  // The bytes of the ids' tokens, concatenated (added tokens as their text, special ones too).
  std::string decode(const std::vector<std::int64_t>& ids) const;
  // Ids run from 0 to size() - 1 (the vocab and the added tokens).
  std::int64_t size() const { return std::int64_t(token_bytes_.size()); }
  // Each id's bytes as they appear in decoded text ("Ġthe" -> " the"); a multi-byte character cut
  // between tokens gives bytes that are not UTF-8 alone, whole again once concatenated.
  const std::vector<std::string>& token_texts() const { return token_bytes_; }

 private:
  struct Added {
    std::string content;
    std::int32_t id = 0;
    bool lstrip = false, rstrip = false, single_word = false;
  };
  struct Merge {
    std::int32_t rank = 0, id = 0;
  };
  void encode_chunk(const std::string& text, std::size_t begin, std::size_t end,
                    std::unordered_map<std::string, std::vector<std::int32_t>>& cache,
                    std::vector<std::int64_t>& out) const;
  const std::vector<std::int32_t>& encode_word(const std::string& word,
                                               std::unordered_map<std::string, std::vector<std::int32_t>>& cache) const;

  std::string file_;
  std::vector<std::string> token_bytes_;                    // id -> bytes
  std::array<std::int32_t, 256> byte_id_{};                 // byte -> its one-byte token
  std::unordered_map<std::uint64_t, Merge> merges_;         // (left id << 32 | right id) -> rank, merged id
  std::unordered_map<std::string, std::int32_t> by_bytes_;  // only with ignore_merges
  std::vector<Added> added_;                                // longest first
  bool add_prefix_space_ = false, ignore_merges_ = false;
};

}  // namespace bundled_datasets
