// SentencePiece tokenizers (Llama 1 and 2's, T5's) for the text data set, through Debian's
// libsentencepiece (loaded apart: readers/sentencepiece_library.h): a `.model` file read, or one
// trained on a text (BPE or unigram). Training
// is set up to lose nothing (identity normalisation, whitespace kept, unknown bytes as byte
// pieces), so decode(encode(text)) gives the text back, as a language model's data needs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace bundled_datasets {

class SentencePieceModel;

struct SentencePieceTraining {
  std::string type = "bpe";  // "bpe" or "unigram"
  std::int64_t pieces = 2000;
};

class SentencePieceTokenizer {
 public:
  // Throws std::runtime_error, one line naming `model_file`: missing, or not a SentencePiece model.
  explicit SentencePieceTokenizer(const std::string& model_file);
  ~SentencePieceTokenizer();
  SentencePieceTokenizer(SentencePieceTokenizer&&) noexcept;

  // Trains a model on `text_file` and writes it to `model_file`; throws std::runtime_error, one
  // line naming the text, when the text cannot give that many pieces (SentencePiece's reason).
  static void train(const std::string& text_file, const std::string& model_file, const SentencePieceTraining& how);

  std::vector<std::int64_t> encode(const std::string& text) const;
  std::string decode(const std::vector<std::int64_t>& ids) const;
  std::int64_t size() const;
  // Each id's text as it appears in decoded output ("▁the" -> " the", "<0x0A>" kept: generate
  // turns byte names into their byte; control pieces such as <s> -> "").
  std::vector<std::string> piece_texts() const;

 private:
  std::string file_;
  std::unique_ptr<SentencePieceModel> model_;
};

}  // namespace bundled_datasets
