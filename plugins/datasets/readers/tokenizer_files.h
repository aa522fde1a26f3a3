// The tokenizer files the text and tokens data sets read, as the SDK's Tokenizer (SDK 4.2), so
// that the host can keep one with a run and open it again for `generate` and `tokenize`: a
// Hugging Face tokenizer.json (byte-level BPE, readers/bpe_tokenizer.h) or a SentencePiece .model
// (readers/sentencepiece_tokenizer.h), told apart by their content.
#pragma once

#include <memory>
#include <string>

#include "plugtrain/dataset.h"

namespace bundled_datasets {

// Throws std::runtime_error, one line naming `file`, when it is neither kind.
std::unique_ptr<plugtrain::Tokenizer> open_tokenizer(const std::string& file);
// One kind only (the text data set's vocabulary "bpe", "sentencepiece").
std::unique_ptr<plugtrain::Tokenizer> open_bpe_tokenizer(const std::string& file);
std::unique_ptr<plugtrain::Tokenizer> open_sentencepiece_tokenizer(const std::string& file);

// A token's bytes as a name a vocabulary list can hold (UTF-8): a byte outside a whole UTF-8
// character (a character cut between tokens) is "<0xNN>", which generate prints as its byte.
std::string token_name(const std::string& bytes);

}  // namespace bundled_datasets
