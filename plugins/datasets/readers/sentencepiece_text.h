// The text data set's `vocabulary = "sentencepiece"`: the text's two splits as SentencePiece ids,
// from a model the user names (`tokenizer = "m.model"`) or one trained on the training split
// (`train_tokenizer = "bpe" | "unigram"`, `tokenizer_pieces = N`). A trained model is kept in the
// user's cache, named by the hashes of the training text and the training settings, so the next
// run with the same text and settings reads it instead of training again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plugtrain/options.h"

namespace bundled_datasets {

struct TokenStreams {
  std::vector<std::int64_t> train, val;
  std::vector<std::string> names;  // each id's text, as generate prints it
  std::string note;                // the vocabulary line of the data set's notes
};

// `text` is the file's bytes, split at `cut` (a byte offset on a character boundary): nanoGPT's
// prepare.py splits the text, then encodes each part. `options` name the model (tokenizer) or
// how to train one (train_tokenizer, tokenizer_pieces). Throws std::runtime_error, one line.
TokenStreams sentencepiece_streams(const std::string& path, const std::string& text, std::size_t cut,
                                   const plugtrain::Options& options);

}  // namespace bundled_datasets
