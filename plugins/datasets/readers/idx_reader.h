// Reader for the IDX format of MNIST-style data sets, gzip-compressed or plain.
//
// Layout: a big-endian magic 0x0000TTDD (TT: element type, DD: number of dims), DD
// big-endian uint32 sizes, then the elements in row-major order. Only the unsigned byte
// type (0x08) is supported, which is all MNIST and Fashion-MNIST use.
#pragma once

#include <filesystem>

#include <ATen/core/Tensor.h>

namespace plugtrain::data {

// A uint8 CPU tensor shaped by the file's dims. Throws DataError (one line naming the
// file) for a missing file, a wrong magic, an unsupported element type or truncated data.
at::Tensor read_idx(const std::filesystem::path& path);

}  // namespace plugtrain::data
