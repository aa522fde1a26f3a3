// `plugtrain tokenize FILE --run RUN | --tokenizer T`: a text file's token ids and pieces in a
// language model's tokenizer (the one a run keeps, or a tokenizer file), for checking what a
// model sees: how many tokens, which pieces, and whether decoding gives the text back.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace plugtrain {

struct TokenizeRequest {
  std::filesystem::path text;       // the file to tokenize ("-": standard input)
  std::filesystem::path run;        // a run's folder (or a checkpoint in it): its tokenizer
  std::filesystem::path tokenizer;  // or a tokenizer file
  std::vector<std::filesystem::path> plugin_paths;
};

struct Tokenized {
  std::filesystem::path tokenizer;  // the file that was opened
  std::string dataset;              // the data set whose opener read it
  std::int64_t vocabulary = 0;
  std::int64_t bytes = 0;
  std::vector<std::int64_t> ids;
  std::vector<std::string> pieces;  // each id's piece, as the tokenizer names it
  bool round_trip = false;          // decode(encode(text)) == text
  double encode_seconds = 0;        // encode alone, for comparing tokenizers' speed
};

// Throws Error (exit 2, one line) for a missing file, both or neither of run and tokenizer, a run
// without a tokenizer, or a file no data set opens.
Tokenized tokenize_file(const TokenizeRequest& request);

std::string tokenized_json(const Tokenized& t);
// "<N> tokens ...", then one line per token: its id and its piece (control bytes escaped).
std::string tokenized_text(const Tokenized& t);

}  // namespace plugtrain
