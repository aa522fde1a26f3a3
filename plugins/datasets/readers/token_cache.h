// The text data set's sub-word vocabularies ("bpe", "sentencepiece"): the text tokenized once.
// Its two token streams are kept in the user's cache (~/.cache/plugtrain/tokens/KEY/: train.bin,
// val.bin and meta.json, nanoGPT's layout, uint16 or uint32 by the vocabulary), keyed by the
// text's and the tokenizer file's checksums and the split point, so the next run of the same
// text and tokenizer reads them instead of tokenizing again (the tokenizers cache sits beside it).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "plugtrain/options.h"

namespace bundled_datasets {

// ~/.cache/plugtrain/<what> ($XDG_CACHE_HOME when set).
std::filesystem::path plugtrain_cache(const std::string& what);

// Two checksums (CRC-32 and Adler-32) and the length of `bytes`, as 24 characters and the length:
// a name for what was made from them.
std::string bytes_key(const std::string& bytes);

struct SubwordStreams {
  at::Tensor train, val;           // int64 token ids
  std::vector<std::string> names;  // each id's text, as generate prints it
  std::string note;                // the vocabulary line of the data set's notes
  std::string tokenizer_file;      // absolute: the file the ids came from
};

// `text` is the file's bytes (from `path`), split at `cut` (a byte offset on a character's
// start): nanoGPT's prepare.py splits the text, then encodes each part, so no token spans the cut
// and the val split's ids never depend on the training text. Throws std::runtime_error, one line.
SubwordStreams subword_streams(const std::string& path, const std::string& text, std::size_t cut,
                               const plugtrain::Options& options);

}  // namespace bundled_datasets
