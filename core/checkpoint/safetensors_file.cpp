#include "checkpoint/safetensors_file.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <nlohmann/json.hpp>

#include "checkpoint/checkpoint_error.h"
#include "util/atomic_file.h"

namespace plugtrain {

namespace {

// safetensors' code for each dtype written here; nullptr for the rest.
const char* safetensors_dtype(c10::ScalarType type) {
  switch (type) {
    case c10::kFloat: return "F32";
    case c10::kHalf: return "F16";
    case c10::kBFloat16: return "BF16";
    case c10::kDouble: return "F64";
    case c10::kLong: return "I64";
    case c10::kInt: return "I32";
    case c10::kShort: return "I16";
    case c10::kChar: return "I8";
    case c10::kByte: return "U8";
    case c10::kBool: return "BOOL";
    default: return nullptr;
  }
}

// The tensors' bytes are copied as they lie in memory, which the format wants little-endian.
bool little_endian_host() {
  const std::uint16_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

void append_u64_le(std::string& out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
}

}  // namespace

std::string safetensors_bytes(const std::vector<std::pair<std::string, at::Tensor>>& tensors, const std::string& what) {
  if (!little_endian_host())
    throw CheckpointError(what + ": safetensors files are little-endian and this machine is not");
  std::vector<const std::pair<std::string, at::Tensor>*> order;
  order.reserve(tensors.size());
  for (const auto& item : tensors) order.push_back(&item);
  std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) { return a->first < b->first; });

  // The header's keys come out sorted (nlohmann::json's objects are std::maps), as the data is.
  nlohmann::json header = nlohmann::json::object();
  header["__metadata__"] = {{"format", "pt"}};
  std::vector<at::Tensor> data;
  data.reserve(order.size());
  std::uint64_t offset = 0;
  for (const auto* item : order) {
    const std::string& name = item->first;
    const at::Tensor& tensor = item->second;
    const std::string named = what + ": tensor '" + name + "'";
    if (header.contains(name))
      throw CheckpointError(named + (name == "__metadata__" ? ": the name is reserved for the header's metadata"
                                                            : ": the name is there twice"));
    if (!tensor.defined()) throw CheckpointError(named + ": has no value (an undefined tensor)");
    if (tensor.layout() != c10::kStrided)
      throw CheckpointError(named + ": is not a dense tensor (safetensors holds dense tensors only)");
    const char* dtype = safetensors_dtype(tensor.scalar_type());
    if (dtype == nullptr)
      throw CheckpointError(named + ": has dtype " + std::string(c10::toString(tensor.scalar_type())) +
                            ", which is not written as safetensors here (F32, F16, BF16, F64, I64, I32, I16, I8, "
                            "U8 and BOOL are)");
    at::Tensor bytes = tensor.cpu().contiguous();
    const auto size = static_cast<std::uint64_t>(bytes.numel()) * static_cast<std::uint64_t>(bytes.element_size());
    header[name] = {{"dtype", dtype},
                    {"shape", bytes.sizes().vec()},
                    {"data_offsets", nlohmann::json::array({offset, offset + size})}};
    offset += size;
    data.push_back(std::move(bytes));
  }

  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::exception& e) {  // a name that is not UTF-8
    throw CheckpointError(what + ": a tensor name cannot be written in the JSON header: " + e.what());
  }
  text.append((8 - text.size() % 8) % 8, ' ');  // the data starts 8-byte aligned

  std::string out;
  out.reserve(8 + text.size() + offset);
  append_u64_le(out, text.size());
  out += text;
  for (const at::Tensor& t : data)
    if (t.numel() > 0) out.append(static_cast<const char*>(t.data_ptr()), t.numel() * t.element_size());
  return out;
}

void write_safetensors(const std::filesystem::path& path,
                       const std::vector<std::pair<std::string, at::Tensor>>& tensors) {
  write_file_atomically(path, safetensors_bytes(tensors, path.string()));
}

}  // namespace plugtrain
