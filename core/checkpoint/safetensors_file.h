// The safetensors format (https://github.com/huggingface/safetensors), which Python's
// safetensors.torch.load_file and Hugging Face tools read without unpickling anything: an 8-byte
// little-endian header length N, N bytes of JSON (each tensor's dtype, shape and byte range
// within the data that follows; padded with spaces to a multiple of 8 so the data is aligned),
// then every tensor's bytes, contiguous and little-endian, one after another in name order.
// Written here (`plugtrain export`, the loggers' model.safetensors) and read (`[model] init`).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

namespace plugtrain {

// The file's bytes. Names must be unique (and not "__metadata__", where the header says
// {"format": "pt"}); tensors may share storage (each is written on its own) and may have no
// elements (an empty byte range). Throws CheckpointError naming the tensor, prefixed with
// `what`, for a duplicate name or a dtype safetensors has no code for here (anything but
// F32, F16, BF16, F64, I64, I32, I16, I8, U8, BOOL).
std::string safetensors_bytes(const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                              const std::string& what = "safetensors");

// Writes safetensors_bytes(tensors) to `path` atomically (util/atomic_file.h); errors name `path`.
void write_safetensors(const std::filesystem::path& path,
                       const std::vector<std::pair<std::string, at::Tensor>>& tensors);

// The tensors of a safetensors file, by name (CPU, contiguous; "__metadata__", a map of strings,
// is checked and dropped). The file is untrusted: every bound is checked before anything is
// allocated: the header length against the file and the format's 100 MB, the header's JSON
// (nesting, a shape's 64 dimensions) as it is parsed, each tensor's dtype, shape (its element and
// byte counts without overflow) and data_offsets against the data, and the tensors covering the
// data exactly, without overlaps or gaps (the reference reader's rules). Each refusal is a
// CheckpointError of one line naming `path` and the cause (names in it are printable and short).
std::map<std::string, at::Tensor> read_safetensors(const std::filesystem::path& path);

}  // namespace plugtrain
