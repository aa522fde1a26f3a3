// Writing the safetensors format (https://github.com/huggingface/safetensors), which Python's
// safetensors.torch.load_file and Hugging Face tools read without unpickling anything: an 8-byte
// little-endian header length N, N bytes of JSON (each tensor's dtype, shape and byte range
// within the data that follows; padded with spaces to a multiple of 8 so the data is aligned),
// then every tensor's bytes, contiguous and little-endian, one after another in name order.
#pragma once

#include <filesystem>
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
void write_safetensors(const std::filesystem::path& path, const std::vector<std::pair<std::string, at::Tensor>>& tensors);

}  // namespace plugtrain
