// The windows both text data sets give (text_corpus.h says how): `context` tokens at every
// offset of the training stream, every `eval_stride` of the val stream, each with the tokens that
// follow; strided views of the two streams, not copies.
#pragma once

#include <string>

#include <ATen/core/Tensor.h>

#include "plugtrain/dataset.h"

namespace bundled_datasets {

// Throws std::runtime_error naming `where` when a split holds less than one window and its next token.
plugtrain::DatasetRead windows_read(const at::Tensor& train, const at::Tensor& val, const plugtrain::Options& options,
                                    const std::string& where);

}  // namespace bundled_datasets
