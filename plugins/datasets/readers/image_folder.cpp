#include "readers/image_folder.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include <ATen/ATen.h>

#include "data/data_error.h"
#include "data/image_codec.h"

namespace plugtrain::data {

namespace {

namespace fs = std::filesystem;

bool is_image(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return ext == ".jpg" || ext == ".jpeg" || ext == ".png";
}

// The image files directly in `folder`, sorted by name.
std::vector<fs::path> images_in(const fs::path& folder) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec))
    if (entry.is_regular_file(ec) && is_image(entry.path())) files.push_back(entry.path());
  if (ec) throw DataError(folder.string() + ": cannot list: " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> subfolders(const fs::path& folder) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec))
    if (entry.is_directory(ec)) names.push_back(entry.path().filename().string());
  if (ec) throw DataError(folder.string() + ": cannot list: " + ec.message());
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<uint8_t> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(path.string() + ": cannot open");
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// Reads, decodes and resizes one image into `out` (3 x size x size bytes, planar).
void decode_into(const fs::path& path, int64_t size, uint8_t* out) {
  const std::vector<uint8_t> bytes = read_file(path);
  const Image decoded = decode_image(bytes.data(), bytes.size(), path.string(), int(size));
  const Image square = resize_shorter_then_center_crop(decoded, int(size));
  const int64_t plane = size * size;
  const uint8_t* px = square.pixels.data();
  for (int64_t i = 0; i < plane; ++i) {
    out[i] = px[3 * i];
    out[plane + i] = px[3 * i + 1];
    out[2 * plane + i] = px[3 * i + 2];
  }
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  size_t b = 0;
  while (b < s.size() && (s[b] == ' ' || s[b] == '\t')) ++b;
  return s.substr(b);
}

std::vector<std::string> read_lines(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw DataError(path.string() + ": missing");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(trim(line));
  return lines;
}

}  // namespace

ImageList scan_image_folder(const fs::path& root) {
  std::error_code ec;
  if (!fs::is_directory(root / "train", ec))
    throw DataError(root.string() + ": no train/ folder (expected <path>/train/<class>/<image> and val/ or test/)");
  ImageList list;
  list.class_names = subfolders(root / "train");
  if (list.class_names.empty()) throw DataError((root / "train").string() + ": no class folders");
  std::map<std::string, int64_t> index;
  for (size_t c = 0; c < list.class_names.size(); ++c) {
    index[list.class_names[c]] = int64_t(c);
    const fs::path folder = root / "train" / list.class_names[c];
    const auto files = images_in(folder);
    if (files.empty()) throw DataError(folder.string() + ": empty class folder (no .jpg, .jpeg or .png images)");
    for (const auto& f : files) list.train.push_back({f, int64_t(c)});
  }
  for (const char* split : {"val", "test"}) {
    if (!fs::is_directory(root / split, ec)) continue;
    list.test_split = split;
    for (const auto& name : subfolders(root / split)) {
      const auto it = index.find(name);
      if (it == index.end())
        throw DataError((root / split / name).string() + ": class '" + name + "' is not a class of train/");
      for (const auto& f : images_in(root / split / name)) list.test.push_back({f, it->second});
    }
    break;
  }
  if (list.test_split.empty()) throw DataError(root.string() + ": no val/ or test/ folder beside train/");
  if (list.test.empty()) throw DataError((root / list.test_split).string() + ": no images");
  return list;
}

ImageList scan_tiny_imagenet(const fs::path& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) throw DataError(root.string() + ": no such folder");
  std::vector<std::string> wnids;
  for (const auto& line : read_lines(root / "wnids.txt"))
    if (!line.empty()) wnids.push_back(line);
  if (wnids.empty()) throw DataError((root / "wnids.txt").string() + ": no class ids");
  std::sort(wnids.begin(), wnids.end());
  std::map<std::string, int64_t> index;
  for (size_t c = 0; c < wnids.size(); ++c) index[wnids[c]] = int64_t(c);

  // words.txt: "<wnid>\t<name>, <other name>, ..." for every ImageNet synset; the first name.
  ImageList list;
  list.class_names = wnids;
  if (fs::exists(root / "words.txt", ec)) {
    for (const auto& line : read_lines(root / "words.txt")) {
      const auto tab = line.find('\t');
      if (tab == std::string::npos) continue;
      const auto it = index.find(line.substr(0, tab));
      if (it == index.end()) continue;
      std::string name = line.substr(tab + 1);
      name = trim(name.substr(0, name.find(',')));
      if (!name.empty()) list.class_names[size_t(it->second)] = name;
    }
  }
  for (size_t c = 0; c < wnids.size(); ++c) {
    const fs::path folder = root / "train" / wnids[c] / "images";
    if (!fs::is_directory(folder, ec)) throw DataError(folder.string() + ": missing (class " + wnids[c] + ")");
    const auto files = images_in(folder);
    if (files.empty()) throw DataError(folder.string() + ": empty class folder (no images)");
    for (const auto& f : files) list.train.push_back({f, int64_t(c)});
  }
  // val/val_annotations.txt: "<file>\t<wnid>\t<x0>\t<y0>\t<x1>\t<y1>".
  const fs::path annotations = root / "val" / "val_annotations.txt";
  const auto lines = read_lines(annotations);
  for (size_t n = 0; n < lines.size(); ++n) {
    if (lines[n].empty()) continue;
    std::istringstream fields(lines[n]);
    std::string file, wnid;
    fields >> file >> wnid;
    const std::string where = annotations.string() + ":" + std::to_string(n + 1);
    if (wnid.empty()) throw DataError(where + ": expected '<file> <wnid> ...'");
    const auto it = index.find(wnid);
    if (it == index.end()) throw DataError(where + ": class '" + wnid + "' is not in wnids.txt");
    const fs::path image = root / "val" / "images" / file;
    if (!fs::is_regular_file(image, ec)) throw DataError(where + ": image " + image.string() + " does not exist");
    list.test.push_back({image, it->second});
  }
  if (list.test.empty()) throw DataError(annotations.string() + ": no validation images");
  list.test_split = "val";
  return list;
}

int64_t decoded_bytes(int64_t count, int64_t image_size) { return count * 3 * image_size * image_size; }

int64_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  for (std::string key; in >> key;) {
    int64_t kib = 0;
    in >> kib;
    if (key == "MemAvailable:") return kib * 1024;
    in.ignore(1 << 10, '\n');
  }
  return 0;
}

Dataset image_dataset(const std::vector<ImageFile>& files, const std::vector<std::string>& class_names,
                      const DecodeSettings& settings, DecodeReport* report) {
  const int64_t n = int64_t(files.size()), size = settings.image_size;
  if (size < 1) throw DataError("image size must be >= 1 (got " + std::to_string(size) + ")");
  Dataset d;
  d.num_classes = int64_t(class_names.size());
  d.class_names = class_names;
  d.sample_shape = {3, size, size};
  d.labels = at::empty({n}, at::TensorOptions().dtype(at::kLong));
  for (int64_t i = 0; i < n; ++i) d.labels.data_ptr<int64_t>()[i] = files[size_t(i)].label;

  if (!settings.in_memory) {
    auto shared = std::make_shared<const std::vector<ImageFile>>(files);
    d.decode = [shared, size](int64_t i, uint8_t* out) { decode_into((*shared)[size_t(i)].path, size, out); };
    return d;
  }

  const auto start = std::chrono::steady_clock::now();
  const int threads = std::max(1, settings.threads > 0 ? settings.threads : int(std::thread::hardware_concurrency()));
  d.images = at::empty({n, 3, size, size}, at::TensorOptions().dtype(at::kByte));
  uint8_t* pixels = d.images.data_ptr<uint8_t>();
  const int64_t per_image = 3 * size * size;
  std::vector<std::string> errors(static_cast<size_t>(n));
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  auto work = [&] {
    for (int64_t i; (i = next++) < n;) {
      if (failed && !settings.skip_bad) return;
      try {
        decode_into(files[size_t(i)].path, size, pixels + i * per_image);
      } catch (const std::exception& e) {
        errors[size_t(i)] = e.what();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();

  std::vector<int64_t> kept;
  std::string first_error;
  for (int64_t i = 0; i < n; ++i) {
    if (errors[size_t(i)].empty()) {
      kept.push_back(i);
    } else if (first_error.empty()) {
      first_error = errors[size_t(i)];
    }
  }
  if (!first_error.empty() && !settings.skip_bad)
    throw DataError(first_error + " (data.skip_bad = true skips such images)");
  const int64_t skipped = n - int64_t(kept.size());
  if (skipped > 0) {
    if (kept.empty()) throw DataError("every image failed to decode; the first: " + first_error);
    const at::Tensor keep = at::tensor(kept, at::TensorOptions().dtype(at::kLong));
    d.images = d.images.index_select(0, keep);
    d.labels = d.labels.index_select(0, keep);
  }
  if (report) {
    report->decoded = int64_t(kept.size());
    report->skipped = skipped;
    report->first_skipped = first_error;
    report->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    report->threads = threads;
  }
  return d;
}

}  // namespace plugtrain::data
