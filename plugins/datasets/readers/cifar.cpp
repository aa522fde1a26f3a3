#include "readers/cifar.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include <ATen/ATen.h>

#include "data/data_error.h"
#include "readers/tar_archive.h"

namespace plugtrain::data {

namespace {

namespace fs = std::filesystem;
constexpr int64_t kPixels = 3 * 32 * 32;

struct Layout {
  std::vector<std::string> train_files, test_files;
  int64_t label_bytes;   // bytes before the pixels
  int64_t label_offset;  // which of them is the label used
  int64_t classes;
  std::string names_file;
};

Layout layout_of(CifarKind kind, CifarLabels labels) {
  if (kind == CifarKind::cifar10)
    return {{"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin"},
            {"test_batch.bin"},
            1,
            0,
            10,
            "batches.meta.txt"};
  const bool fine = labels == CifarLabels::fine;
  return {{"train.bin"}, {"test.bin"}, 2, fine ? 1 : 0, fine ? 100 : 20,
          fine ? "fine_label_names.txt" : "coarse_label_names.txt"};
}

// Where the files come from: a folder, or the members of an archive read into memory.
class Source {
 public:
  explicit Source(const fs::path& path, const Layout& layout) : path_(path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      folder_ = path;
      // The official archive extracts to cifar-10-batches-bin/ or cifar-100-binary/.
      for (const char* sub : {"cifar-10-batches-bin", "cifar-100-binary"})
        if (!fs::exists(path / layout.train_files[0], ec) && fs::is_directory(path / sub, ec)) folder_ = path / sub;
      return;
    }
    if (!fs::is_regular_file(path, ec)) throw DataError(path.string() + ": no such folder or archive");
    if (!looks_like_archive(path))
      throw DataError(path.string() + ": not a folder and not a .tar.gz (or .tar) archive of the CIFAR binary version");
    std::vector<std::string> names = layout.train_files;
    names.insert(names.end(), layout.test_files.begin(), layout.test_files.end());
    names.push_back(layout.names_file);
    members_ = read_archive_members(path, [&](const std::string& member) {
      for (const auto& n : names)
        if (basename(member) == n) return true;
      return false;
    });
  }

  // The whole file, or nullopt when it is not there.
  std::optional<std::vector<uint8_t>> read(const std::string& name) const {
    if (!folder_.empty()) {
      std::ifstream in(folder_ / name, std::ios::binary);
      if (!in) return std::nullopt;
      return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
    }
    for (const auto& [member, bytes] : members_)
      if (basename(member) == name) return bytes;
    return std::nullopt;
  }

  // How an error names the file.
  std::string where(const std::string& name) const {
    return folder_.empty() ? path_.string() + ": " + name : (folder_ / name).string();
  }

 private:
  static std::string basename(const std::string& member) {
    const auto slash = member.find_last_of('/');
    return slash == std::string::npos ? member : member.substr(slash + 1);
  }
  fs::path path_, folder_;
  std::map<std::string, std::vector<uint8_t>> members_;
};

// One split: every file's records, in file order.
Dataset read_split(const Source& source, const Layout& layout, const std::vector<std::string>& files) {
  const int64_t record = layout.label_bytes + kPixels;
  std::vector<std::vector<uint8_t>> contents;
  int64_t total = 0, first_count = -1;
  for (const auto& name : files) {
    std::optional<std::vector<uint8_t>> bytes = source.read(name);
    if (!bytes) throw DataError(source.where(name) + ": missing (expected the CIFAR binary version's " + name + ")");
    const auto size = int64_t(bytes->size());
    if (size == 0 || size % record != 0)
      throw DataError(source.where(name) + ": " + std::to_string(size) + " bytes is not a whole number of " +
                      std::to_string(record) + "-byte records");
    const int64_t count = size / record;
    if (first_count >= 0 && count != first_count)
      throw DataError(source.where(name) + ": " + std::to_string(count) + " records, but " + files[0] + " has " +
                      std::to_string(first_count) + " (the batches of one split have equal lengths)");
    first_count = count;
    total += count;
    contents.push_back(std::move(*bytes));
  }
  Dataset d;
  d.images = at::empty({total, 3, 32, 32}, at::TensorOptions().dtype(at::kByte));
  d.labels = at::empty({total}, at::TensorOptions().dtype(at::kLong));
  auto* pixels = d.images.data_ptr<uint8_t>();
  auto* labels = d.labels.data_ptr<int64_t>();
  int64_t i = 0;
  for (size_t f = 0; f < contents.size(); ++f) {
    const auto& bytes = contents[f];
    for (int64_t r = 0; r < int64_t(bytes.size()) / record; ++r, ++i) {
      const uint8_t* rec = bytes.data() + r * record;
      const int64_t label = rec[layout.label_offset];
      if (label >= layout.classes)
        throw DataError(source.where(files[f]) + ": record " + std::to_string(r) + " has label " +
                        std::to_string(label) + ", outside the " + std::to_string(layout.classes) + " classes");
      labels[i] = label;
      std::memcpy(pixels + i * kPixels, rec + layout.label_bytes, kPixels);
    }
  }
  d.num_classes = layout.classes;
  d.sample_shape = {3, 32, 32};
  return d;
}

// Non-empty lines of the names file; none when it is absent or has the wrong count.
std::vector<std::string> class_names(const Source& source, const Layout& layout) {
  std::optional<std::vector<uint8_t>> bytes = source.read(layout.names_file);
  if (!bytes) return {};
  std::istringstream in(std::string(bytes->begin(), bytes->end()));
  std::vector<std::string> names;
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) names.push_back(line);
  }
  if (int64_t(names.size()) != layout.classes) return {};
  return names;
}

}  // namespace

DatasetPair load_cifar(const fs::path& path, CifarKind kind, CifarLabels labels) {
  const Layout layout = layout_of(kind, labels);
  const Source source(path, layout);
  DatasetPair pair{read_split(source, layout, layout.train_files), read_split(source, layout, layout.test_files)};
  pair.train.class_names = pair.test.class_names = class_names(source, layout);
  return pair;
}

}  // namespace plugtrain::data
