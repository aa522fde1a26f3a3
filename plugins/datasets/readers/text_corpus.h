// Text for language models: the `text` data set (a UTF-8 file, plain or gzipped, with a
// character or byte vocabulary, or a byte-level BPE tokenizer's) and the `tokens` data set
// (nanoGPT's layout: train.bin and val.bin of uint16 token ids, and meta.json with the vocabulary size).
//
// Both give windows of `context` tokens and, as targets, the `context` tokens that follow
// (next_token). The training split has a window at every offset of its stream: a shuffled
// epoch of them is nanoGPT's random offsets, each drawn once, seeded and resumed exactly with
// the loader's permutation. The val split's windows follow one another `eval_stride` apart
// (default `context`: every val token is predicted once). The windows are strided views of
// one int64 stream per split, so memory is the stream's, not windows x context.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plugtrain/dataset.h"

namespace bundled_datasets {

// The vocabulary of a text: each token's text, in id order. Character vocabularies are the
// training split's distinct characters in code-point order; byte vocabularies name the 256
// bytes (printable ASCII as itself, others "<0xNN>", sentencepiece's convention).
std::vector<std::string> byte_vocabulary();

plugtrain::DatasetRead read_text(const plugtrain::DatasetQuery& query, const plugtrain::Options& options);
plugtrain::DatasetRead read_tokens(const plugtrain::DatasetQuery& query, const plugtrain::Options& options);
// data.path: a readable file (text) or a folder with train.bin and val.bin (tokens).
void check_text_path(const plugtrain::DatasetQuery& query);
void check_tokens_path(const plugtrain::DatasetQuery& query);
// vocabulary "bpe": [dataset] tokenizer names a byte-level BPE tokenizer.json (readers/bpe_tokenizer.h).
void check_text_tokenizer(const plugtrain::Options& options);

}  // namespace bundled_datasets
