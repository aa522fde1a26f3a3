// nanoGPT's token files: a .bin of little-endian token ids, uint16 (prepare.py's layout) or
// uint32 for vocabularies over 65,536, read by the tokens data set and written by the text data
// set's token cache.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include <ATen/core/Tensor.h>

namespace bundled_datasets {

// 2 bytes per id up to 65,536 tokens, else 4.
int token_width(std::int64_t vocabulary);

// The ids of `file` (`width` bytes each), each below `vocabulary`; throws std::runtime_error,
// one line naming the file, the position and the id, for anything else.
at::Tensor read_token_file(const std::filesystem::path& file, std::int64_t vocabulary, int width);

// Writes `ids` (each below 2^(8*width)) whole or not at all: a temporary file renamed.
void write_token_file(const std::filesystem::path& file, const std::vector<std::int64_t>& ids, int width);

}  // namespace bundled_datasets
