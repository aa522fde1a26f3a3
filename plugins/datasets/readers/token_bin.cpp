#include "readers/token_bin.h"

#include <unistd.h>

#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include <ATen/ATen.h>

namespace bundled_datasets {

namespace {

[[noreturn]] void refuse_bin(const std::string& line) { throw std::runtime_error(line); }

}  // namespace

int token_width(std::int64_t vocabulary) { return vocabulary > 65536 ? 4 : 2; }

at::Tensor read_token_file(const std::filesystem::path& file, std::int64_t vocabulary, int width) {
  std::ifstream in(file, std::ios::binary);
  if (!in) refuse_bin("'" + file.string() + "': cannot be opened");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const char* kind = width == 4 ? "uint32" : "uint16";
  if (bytes.size() % std::size_t(width) != 0)
    refuse_bin("'" + file.string() + "': " + std::to_string(bytes.size()) + " bytes, not a whole number of " + kind +
               " token ids");
  const std::int64_t count = std::int64_t(bytes.size()) / width;
  at::Tensor ids = at::empty({count}, at::TensorOptions().dtype(at::kLong));
  auto* out = ids.data_ptr<std::int64_t>();
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  for (std::int64_t i = 0; i < count; ++i) {
    std::int64_t id = 0;
    for (int k = width - 1; k >= 0; --k) id = (id << 8) | std::int64_t(p[width * i + k]);  // little-endian
    out[i] = id;
    if (out[i] >= vocabulary)
      refuse_bin("'" + file.string() + "': token id " + std::to_string(out[i]) + " at position " + std::to_string(i) +
                 " is at or above the vocabulary size " + std::to_string(vocabulary) + " (meta.json)");
  }
  return ids;
}

void write_token_file(const std::filesystem::path& file, const std::vector<std::int64_t>& ids, int width) {
  std::string bytes(ids.size() * std::size_t(width), '\0');
  for (std::size_t i = 0; i < ids.size(); ++i)
    for (int k = 0; k < width; ++k) bytes[i * std::size_t(width) + std::size_t(k)] = char((ids[i] >> (8 * k)) & 0xFF);
  // A partial file of this process's own: ddp's ranks each read the data set and may write the same cache at once.
  std::filesystem::path partial = file;
  partial += "." + std::to_string(::getpid()) + ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
    if (!out.flush()) refuse_bin("'" + partial.string() + "': cannot be written");
  }
  std::filesystem::rename(partial, file);
}

}  // namespace bundled_datasets
