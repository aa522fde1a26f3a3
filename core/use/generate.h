// `plugtrain generate`: text from a trained language model (task language_model), nanoGPT's
// sample.py in one command. The model is built and loaded as `plugtrain predict` builds an image
// classifier's, from the run's experiment and classes.json (its vocabulary and window), with no
// data set read. Tokens are drawn one at a time from the last `context` tokens' next-token
// distribution, divided by the temperature and cut to the top k, with a CPU generator seeded by
// the request: the same seed gives the same text on any device.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "use/trained_run.h"

namespace plugtrain {

struct GenerateRequest {
  TrainedRunRequest source;  // a run folder, or a checkpoint in one
  // Text, encoded with the run's tokenizer when it keeps one (classes.json "tokenizer"), else in its
  // vocabulary's characters or bytes; empty: a newline (or token 0).
  std::string prompt;
  std::int64_t tokens = 200;
  double temperature = 1.0;  // 0: always the most likely token
  std::int64_t top_k = 0;    // 0: the whole vocabulary
  std::uint64_t seed = 1337;
};

struct Generated {
  std::string prompt, text;          // text: what was generated, after the prompt
  std::vector<std::int64_t> tokens;  // the generated ids
  std::vector<std::int64_t> prompt_tokens;  // the prompt's ids (the run's tokenizer's, when it keeps one)
};

// Throws Error (one line) for a run that is not a language model, a prompt character outside
// the vocabulary, or a run whose vocabulary has no text. A run that keeps a tokenizer is decoded
// by it (sub-words, spaces and bytes as the tokenizer's own decoder gives them).
Generated generate_text(const GenerateRequest& request, std::ostream& log);

// The text of token ids in a vocabulary of names: "<0xNN>" is that byte, any other name its text; a
// vocabulary without text (names "0", "1", ...: a tokens data set without itos) gives " 12 7 431".
std::string decode_tokens(const std::vector<std::int64_t>& ids, const std::vector<std::string>& names);
// Ids of `text` in the vocabulary: bytes for a byte vocabulary, ids written as numbers for one
// without text, else each character's name (Error naming a character the vocabulary lacks).
std::vector<std::int64_t> encode_text(const std::string& text, const std::vector<std::string>& names);

std::string generated_json(const GenerateRequest& request, const Generated& generated);

}  // namespace plugtrain
