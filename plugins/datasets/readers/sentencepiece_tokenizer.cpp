#include "readers/sentencepiece_tokenizer.h"

#include <stdexcept>
#include <unordered_map>

#include "readers/sentencepiece_library.h"

namespace bundled_datasets {

namespace {

[[noreturn]] void refuse(const std::string& line) { throw std::runtime_error(line); }

// SentencePiece's messages may run over lines: the first is the reason.
std::string reason_of(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

SentencePieceTokenizer::SentencePieceTokenizer(const std::string& model_file) : file_(model_file) {
  try {
    model_ = sentencepiece_library().load(model_file);
  } catch (const std::runtime_error& e) {
    refuse("'" + model_file + "' is not a SentencePiece model (" + reason_of(e.what()) + ")");
  }
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;
SentencePieceTokenizer::SentencePieceTokenizer(SentencePieceTokenizer&&) noexcept = default;

void SentencePieceTokenizer::train(const std::string& text_file, const std::string& model_file,
                                   const SentencePieceTraining& how) {
  std::string prefix = model_file;
  if (prefix.size() > 6 && prefix.compare(prefix.size() - 6, 6, ".model") == 0) prefix.resize(prefix.size() - 6);
  // Lossless for a language model's text: no normalisation, spaces kept as they are, bytes the
  // pieces do not cover as byte pieces (a newline is one: training reads the text line by line).
  const std::unordered_map<std::string, std::string> args = {{"input", text_file},
                                                             {"model_prefix", prefix},
                                                             {"model_type", how.type},
                                                             {"vocab_size", std::to_string(how.pieces)},
                                                             {"normalization_rule_name", "identity"},
                                                             {"remove_extra_whitespaces", "false"},
                                                             {"split_digits", "true"},
                                                             {"byte_fallback", "true"},
                                                             {"character_coverage", "1.0"},
                                                             {"minloglevel", "2"},
                                                             {"num_threads", "2"}};
  try {
    sentencepiece_library().train(args);
  } catch (const std::runtime_error& e) {
    refuse("'" + text_file + "': SentencePiece cannot train a " + how.type + " tokenizer of " +
           std::to_string(how.pieces) + " pieces on it (" + reason_of(e.what()) + ")");
  }
}

std::vector<std::int64_t> SentencePieceTokenizer::encode(const std::string& text) const {
  try {
    const std::vector<int> ids = model_->encode(text);
    return {ids.begin(), ids.end()};
  } catch (const std::runtime_error& e) {
    refuse("'" + file_ + "': cannot encode the text (" + reason_of(e.what()) + ")");
  }
}

std::string SentencePieceTokenizer::decode(const std::vector<std::int64_t>& ids) const {
  try {
    return model_->decode(std::vector<int>(ids.begin(), ids.end()));
  } catch (const std::runtime_error& e) { refuse("'" + file_ + "': cannot decode (" + reason_of(e.what()) + ")"); }
}

std::int64_t SentencePieceTokenizer::size() const { return model_->size(); }

std::vector<std::string> SentencePieceTokenizer::piece_texts() const {
  static const std::string kSpace = "\xe2\x96\x81";  // U+2581, SentencePiece's space
  std::vector<std::string> texts;
  texts.reserve(std::size_t(size()));
  for (int id = 0; id < model_->size(); ++id) {
    std::string piece = model_->piece(id);
    if (model_->is_control(id)) piece.clear();
    if (model_->is_unknown(id)) piece = "\xe2\x81\x87";  // as SentencePiece decodes <unk>: ⁇
    for (std::size_t at; !model_->is_byte(id) && (at = piece.find(kSpace)) != std::string::npos;)
      piece.replace(at, kSpace.size(), " ");
    texts.push_back(std::move(piece));
  }
  return texts;
}

}  // namespace bundled_datasets
