#include "idx_files.h"

#include <filesystem>
#include <stdexcept>
#include <vector>

#include <zlib.h>

namespace fashion_mnist_tasks {

namespace {

// The whole file, through zlib (which reads plain files as they are).
std::vector<unsigned char> read_file(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error(path + ": cannot open");
  std::vector<unsigned char> bytes;
  unsigned char buffer[1 << 16];
  int n;
  while ((n = gzread(f, buffer, sizeof buffer)) > 0) bytes.insert(bytes.end(), buffer, buffer + n);
  const bool failed = n < 0;
  gzclose(f);
  if (failed) throw std::runtime_error(path + ": not a readable gzip file");
  return bytes;
}

std::string find(const std::string& folder, const std::string& name) {
  for (const std::string& candidate : {folder + "/" + name + ".gz", folder + "/" + name})
    if (std::filesystem::exists(candidate)) return candidate;
  throw std::runtime_error(folder + "/" + name + "(.gz): not found (data.path is Fashion-MNIST's folder; Debian: "
                           "the package dataset-fashion-mnist)");
}

std::uint32_t big_endian(const std::vector<unsigned char>& b, std::size_t at) {
  return std::uint32_t(b[at]) << 24 | std::uint32_t(b[at + 1]) << 16 | std::uint32_t(b[at + 2]) << 8 | b[at + 3];
}

// The unsigned-byte tensor of an IDX file with `dims` dimensions.
torch::Tensor read_idx(const std::string& path, std::size_t dims) {
  const std::vector<unsigned char> bytes = read_file(path);
  const std::size_t header = 4 + 4 * dims;
  if (bytes.size() < header || big_endian(bytes, 0) != (0x0800u | dims))
    throw std::runtime_error(path + ": not an IDX file of unsigned bytes with " + std::to_string(dims) + " dimensions");
  std::vector<std::int64_t> shape;
  std::size_t count = 1;
  for (std::size_t d = 0; d < dims; ++d) {
    shape.push_back(big_endian(bytes, 4 + 4 * d));
    count *= std::size_t(shape.back());
  }
  if (bytes.size() != header + count)
    throw std::runtime_error(path + ": " + std::to_string(bytes.size() - header) + " data bytes, its header says " +
                             std::to_string(count));
  return torch::from_blob(const_cast<unsigned char*>(bytes.data()) + header, shape, torch::kUInt8).clone();
}

}  // namespace

Split read_split(const std::string& folder, const std::string& split) {
  Split s;
  s.images = read_idx(find(folder, split + "-images-idx3-ubyte"), 3).unsqueeze(1);
  s.labels = read_idx(find(folder, split + "-labels-idx1-ubyte"), 1).to(torch::kLong);
  if (s.images.size(0) != s.labels.size(0))
    throw std::runtime_error(folder + ": " + split + " has " + std::to_string(s.images.size(0)) + " images and " +
                             std::to_string(s.labels.size(0)) + " labels");
  if (s.labels.numel() > 0 && s.labels.max().item<std::int64_t>() > 9)
    throw std::runtime_error(folder + ": " + split + " labels go beyond Fashion-MNIST's 10 classes");
  return s;
}

const std::vector<std::string>& class_names() {
  static const std::vector<std::string> names = {"t-shirt", "trouser", "pullover", "dress", "coat",
                                                 "sandal",  "shirt",   "sneaker",  "bag",   "ankle-boot"};
  return names;
}

}  // namespace fashion_mnist_tasks
