// The text data set's `vocabulary = "sentencepiece"`: the model its ids come from, one the user
// names (`tokenizer = "m.model"`) or one trained on the training split (`train_tokenizer = "bpe" | "unigram"`,
// `tokenizer_pieces = N`). A trained model is kept in the user's cache, named by the hashes of the training text and
// the training settings, so the next run with the same text and settings reads it instead of training again.
#pragma once

#include <string>

#include "plugtrain/options.h"

namespace bundled_datasets {

// The SentencePiece model of `options`: the one named (tokenizer), or one trained on
// `training_text` (train_tokenizer, tokenizer_pieces) and kept in the cache. `path` names the text
// in messages. Throws std::runtime_error, one line.
std::string sentencepiece_model_file(const std::string& path, const std::string& training_text,
                                     const plugtrain::Options& options);

}  // namespace bundled_datasets
