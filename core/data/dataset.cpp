#include "data/dataset.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "data/data_error.h"
#include "data/idx_reader.h"
#include "util/format.h"

namespace plugtrain::data {
namespace {

namespace fs = std::filesystem;

// folder/name, or folder/name.gz; plain wins when both exist.
fs::path find_file(const fs::path& folder, const std::string& name) {
  std::error_code ec;
  if (fs::is_regular_file(folder / name, ec)) return folder / name;
  if (fs::is_regular_file(folder / (name + ".gz"), ec)) return folder / (name + ".gz");
  throw DataError(folder.string() + ": missing " + name + " (or " + name + ".gz)");
}

struct RawSplit {
  at::Tensor images;  // uint8 N,H,W
  at::Tensor labels;  // uint8 N
};

void check_labels(const RawSplit& raw, const fs::path& file, int64_t num_classes) {
  const at::Tensor outside = raw.labels.ge(num_classes).nonzero();
  if (outside.size(0) == 0) return;
  const int64_t sample = outside[0][0].item<int64_t>();
  throw DataError(file.string() + ": label " + std::to_string(raw.labels[sample].item<int64_t>()) + " of sample " +
                  std::to_string(sample) + " is outside the data set's " + std::to_string(num_classes) +
                  " classes (0.." + std::to_string(num_classes - 1) + "; " + std::to_string(outside.size(0)) +
                  " such labels)");
}

RawSplit read_split(const fs::path& folder, const std::string& prefix) {
  const fs::path images_path = find_file(folder, prefix + "-images-idx3-ubyte");
  const fs::path labels_path = find_file(folder, prefix + "-labels-idx1-ubyte");
  RawSplit raw{read_idx(images_path), read_idx(labels_path)};
  if (raw.images.dim() != 3)
    throw DataError(images_path.string() + ": expected 3 dims (N,H,W), got " + shape_text(raw.images.sizes()));
  if (raw.labels.dim() != 1)
    throw DataError(labels_path.string() + ": expected 1 dim (N), got " + shape_text(raw.labels.sizes()));
  if (raw.images.size(0) != raw.labels.size(0)) {
    throw DataError(images_path.string() + " has " + std::to_string(raw.images.size(0)) + " images but " +
                    labels_path.string() + " has " + std::to_string(raw.labels.size(0)) + " labels");
  }
  if (raw.images.size(0) == 0) throw DataError(images_path.string() + ": no images");
  // Labels are unsigned bytes, so every label is < 256 by construction.
  return raw;
}

// Population mean/std of a float tensor (accumulated in double by LibTorch on the CPU).
std::pair<double, double> mean_std(const at::Tensor& x) {
  auto [std_t, mean_t] = at::std_mean(x, /*dim=*/at::OptionalIntArrayRef{}, /*correction=*/0);
  return {mean_t.item<double>(), std_t.item<double>()};
}

// Exact mean/std of byte images scaled to [0,1], from a 256-bin histogram: one cheap pass
// over the bytes instead of a float reduction over the whole training set.
std::pair<double, double> byte_mean_std(const at::Tensor& u8) {
  const at::Tensor flat = u8.contiguous();
  const auto* p = flat.data_ptr<uint8_t>();
  const int64_t n = flat.numel();
  std::array<std::array<uint64_t, 256>, 4> hist{};  // 4 interleaved tables: fewer store stalls
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    ++hist[0][p[i]];
    ++hist[1][p[i + 1]];
    ++hist[2][p[i + 2]];
    ++hist[3][p[i + 3]];
  }
  for (; i < n; ++i) ++hist[0][p[i]];
  double s1 = 0, s2 = 0;
  for (int v = 0; v < 256; ++v) {
    const double c = static_cast<double>(hist[0][v] + hist[1][v] + hist[2][v] + hist[3][v]);
    s1 += c * v;
    s2 += c * v * v;
  }
  const double mean = s1 / n;
  const double var = std::max(0.0, s2 / n - mean * mean);
  return {mean / 255.0, std::sqrt(var) / 255.0};
}

void normalise(DatasetPair& pair) {
  auto [mean, std] = mean_std(pair.train.images);
  if (!(std > 0.0)) std = 1.0;  // constant images: centre only
  pair.mean = mean;
  pair.std = std;
  pair.train.images.sub_(mean).div_(std);
  pair.test.images.sub_(mean).div_(std);
}

}  // namespace

DatasetPair load_idx_dataset(const fs::path& folder, int64_t num_classes) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) throw DataError(folder.string() + ": no such folder");
  RawSplit train = read_split(folder, "train");
  RawSplit test = read_split(folder, "t10k");
  if (train.images.sizes().slice(1) != test.images.sizes().slice(1)) {
    throw DataError(folder.string() + ": training images are " + shape_text(train.images.sizes()) +
                    " but test images are " + shape_text(test.images.sizes()));
  }

  DatasetPair pair;
  auto [mean, std] = byte_mean_std(train.images);
  if (!(std > 0.0)) std = 1.0;  // constant images: centre only
  pair.mean = mean;
  pair.std = std;
  // (x/255 - mean)/std as one affine map, written straight into the new float32 buffer.
  const double scale = 1.0 / (255.0 * std), shift = -mean / std;
  if (num_classes > 0) {
    check_labels(train, folder / "train-labels-idx1-ubyte", num_classes);
    check_labels(test, folder / "t10k-labels-idx1-ubyte", num_classes);
  }
  const int64_t max_label =
      num_classes > 0 ? num_classes - 1 : std::max(train.labels.max().item<int64_t>(), test.labels.max().item<int64_t>());
  auto make = [&](RawSplit& raw) {
    Dataset d;
    d.images = at::mul(raw.images, scale).add_(shift).unsqueeze(1);  // float32 N,1,H,W
    d.labels = raw.labels.to(at::kLong);
    d.num_classes = max_label + 1;
    d.sample_shape = {1, raw.images.size(1), raw.images.size(2)};
    return d;
  };
  pair.train = make(train);
  pair.test = make(test);
  return pair;
}

DatasetPair make_synthetic(std::vector<int64_t> sample_shape, int64_t num_classes, int64_t train_size,
                           int64_t test_size, uint64_t seed) {
  if (sample_shape.size() != 3) throw DataError("synthetic data: sample_shape must be C,H,W");
  for (auto s : sample_shape)
    if (s <= 0) throw DataError("synthetic data: sample_shape sizes must be positive");
  if (num_classes < 1) throw DataError("synthetic data: num_classes must be at least 1");
  if (train_size < 1 || test_size < 0) throw DataError("synthetic data: train_size must be >= 1, test_size >= 0");

  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  std::vector<int64_t> proto_shape{num_classes};
  proto_shape.insert(proto_shape.end(), sample_shape.begin(), sample_shape.end());
  const at::Tensor prototypes = at::randn(proto_shape, gen, f32);
  constexpr float kNoise = 1.0f;  // per-pixel noise as large as the prototypes; still easy over many pixels

  auto make = [&](int64_t n) {
    Dataset d;
    d.labels = at::randint(num_classes, {n}, gen, at::TensorOptions().dtype(at::kLong));
    std::vector<int64_t> shape{n};
    shape.insert(shape.end(), sample_shape.begin(), sample_shape.end());
    d.images = prototypes.index_select(0, d.labels).add_(at::randn(shape, gen, f32), kNoise);
    d.num_classes = num_classes;
    d.sample_shape = sample_shape;
    return d;
  };
  DatasetPair pair;
  pair.train = make(train_size);
  pair.test = make(test_size);
  normalise(pair);
  return pair;
}

int64_t apply_label_noise(Dataset& d, double p, uint64_t seed) {
  if (!(p >= 0.0 && p <= 1.0)) throw DataError("label noise: p must be in [0,1], got " + std::to_string(p));
  const int64_t n = d.size();
  const auto k = static_cast<int64_t>(std::llround(p * static_cast<double>(n)));
  if (k == 0) return 0;
  if (d.num_classes < 2) throw DataError("label noise: needs at least 2 classes");

  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const auto i64 = at::TensorOptions().dtype(at::kLong);
  const at::Tensor chosen = at::randperm(n, gen, i64).narrow(0, 0, k);
  // old + shift (mod C) with shift in [1, C-1]: always a different class, uniformly.
  const at::Tensor shift = at::randint(1, d.num_classes, {k}, gen, i64);
  at::Tensor labels = d.labels.clone();
  labels.index_put_({chosen}, labels.index_select(0, chosen).add_(shift).remainder_(d.num_classes));
  d.labels = labels;
  return k;
}

Dataset subset(const Dataset& d, int64_t n) {
  if (n <= 0 || n >= d.size()) return d;
  Dataset s = d;
  s.images = d.images.narrow(0, 0, n);
  s.labels = d.labels.narrow(0, 0, n);
  return s;
}

}  // namespace plugtrain::data
