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

void normalise(DatasetPair& pair) {
  auto [mean, std] = mean_std(pair.train.images);
  if (!(std > 0.0)) std = 1.0;  // constant images: centre only
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
  if (num_classes > 0) {
    check_labels(train.labels, num_classes, (folder / "train-labels-idx1-ubyte").string());
    check_labels(test.labels, num_classes, (folder / "t10k-labels-idx1-ubyte").string());
  }
  const int64_t max_label =
      num_classes > 0 ? num_classes - 1 : std::max(train.labels.max().item<int64_t>(), test.labels.max().item<int64_t>());
  auto make = [&](RawSplit& raw) {
    Dataset d;
    d.images = raw.images.unsqueeze(1);  // uint8 N,1,H,W
    d.labels = raw.labels.to(at::kLong);
    d.num_classes = max_label + 1;
    d.sample_shape = {1, raw.images.size(1), raw.images.size(2)};
    return d;
  };
  DatasetPair pair{make(train), make(test)};
  pair.train.normalization = byte_statistics(pair.train.images);
  pair.test.normalization = pair.train.normalization;
  return pair;
}

Normalization byte_statistics(const at::Tensor& images) {
  const at::Tensor u8 = images.contiguous();
  const int64_t channels = u8.size(1), plane = u8.numel() / std::max<int64_t>(1, u8.size(0) * channels);
  const auto* p = u8.data_ptr<uint8_t>();
  // 4 interleaved tables per channel: fewer store stalls on runs of equal bytes.
  std::vector<std::array<std::array<uint64_t, 256>, 4>> hist(static_cast<size_t>(channels));
  for (int64_t s = 0; s < u8.size(0); ++s) {
    for (int64_t c = 0; c < channels; ++c) {
      const uint8_t* q = p + (s * channels + c) * plane;
      auto& h = hist[size_t(c)];
      int64_t i = 0;
      for (; i + 4 <= plane; i += 4) {
        ++h[0][q[i]];
        ++h[1][q[i + 1]];
        ++h[2][q[i + 2]];
        ++h[3][q[i + 3]];
      }
      for (; i < plane; ++i) ++h[0][q[i]];
    }
  }
  Normalization n;
  const double count = double(u8.size(0) * plane);
  for (const auto& h : hist) {
    double s1 = 0, s2 = 0;
    for (int v = 0; v < 256; ++v) {
      const double c = double(h[0][v] + h[1][v] + h[2][v] + h[3][v]);
      s1 += c * v;
      s2 += c * v * v;
    }
    const double mean = count > 0 ? s1 / count : 0;
    const double stddev = count > 0 ? std::sqrt(std::max(0.0, s2 / count - mean * mean)) : 0;
    n.mean.push_back(mean / 255.0);
    n.std.push_back(stddev > 0 ? stddev / 255.0 : 1.0);
  }
  return n;
}

void check_labels(const at::Tensor& labels, int64_t num_classes, const std::string& where) {
  const at::Tensor outside = at::logical_or(labels.ge(num_classes), labels.lt(0)).nonzero();
  if (outside.size(0) == 0) return;
  const int64_t sample = outside[0][0].item<int64_t>();
  throw DataError(where + ": label " + std::to_string(labels[sample].item<int64_t>()) + " of sample " +
                  std::to_string(sample) + " is outside the data set's " + std::to_string(num_classes) +
                  " classes (0.." + std::to_string(num_classes - 1) + "; " + std::to_string(outside.size(0)) +
                  " such labels)");
}

DatasetPair make_synthetic(std::vector<int64_t> sample_shape, int64_t num_classes, int64_t train_size,
                           int64_t test_size, uint64_t seed, TargetKind targets) {
  if (sample_shape.size() != 3) throw DataError("synthetic data: sample_shape must be C,H,W");
  for (auto s : sample_shape)
    if (s <= 0) throw DataError("synthetic data: sample_shape sizes must be positive");
  if (num_classes < 1) throw DataError("synthetic data: num_classes must be at least 1");
  if (train_size < 1 || test_size < 0) throw DataError("synthetic data: train_size must be >= 1, test_size >= 0");

  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  const auto i64 = at::TensorOptions().dtype(at::kLong);
  std::vector<int64_t> proto_shape{num_classes};
  proto_shape.insert(proto_shape.end(), sample_shape.begin(), sample_shape.end());
  const at::Tensor prototypes = at::randn(proto_shape, gen, f32);
  // What a real target scales; drawn only then, so every other kind's data stays as it was.
  const at::Tensor pattern = targets == TargetKind::real ? at::randn(sample_shape, gen, f32) : at::Tensor();
  constexpr float kNoise = 1.0f;  // per-pixel noise as large as the prototypes; still easy over many pixels

  auto make = [&](int64_t n) {
    Dataset d;
    const at::Tensor classes = at::randint(num_classes, {n}, gen, i64);
    std::vector<int64_t> shape{n};
    shape.insert(shape.end(), sample_shape.begin(), sample_shape.end());
    d.images = prototypes.index_select(0, classes).add_(at::randn(shape, gen, f32), kNoise);
    d.num_classes = num_classes;
    d.sample_shape = sample_shape;
    d.target_kind = targets;
    switch (targets) {
      case TargetKind::class_index: d.labels = classes; break;
      case TargetKind::multi_hot: {
        const at::Tensor second = at::randint(num_classes, {n}, gen, i64);
        const at::Tensor distinct = second.ne(classes);
        d.images.add_(prototypes.index_select(0, second).mul_(distinct.to(at::kFloat).view({n, 1, 1, 1})));
        d.labels = at::one_hot(classes, num_classes).logical_or(at::one_hot(second, num_classes)).to(at::kFloat);
        break;
      }
      case TargetKind::real: {
        d.labels = at::rand({n, 1}, gen, f32);
        d.images.add_(pattern.unsqueeze(0) * d.labels.mul(4).sub(2).view({n, 1, 1, 1}));
        d.num_classes = 0;
        break;
      }
      case TargetKind::sequence: {
        const int64_t height = sample_shape[1], slots = std::max<int64_t>(1, sample_shape[2] / height);
        const at::Tensor items = at::randint(1, slots + 1, {n}, gen, i64);
        const at::Tensor sequence = at::randint(num_classes, {n, slots}, gen, i64);
        const at::Tensor kept = at::arange(slots, i64).unsqueeze(0).lt(items.unsqueeze(1));
        d.labels = at::where(kept, sequence, at::full({}, -1, i64));
        at::Tensor strip = at::randn(shape, gen, f32).mul_(kNoise);
        const at::Tensor slices = prototypes.narrow(3, 0, std::min(height, sample_shape[2]));
        for (int64_t s = 0; s < slots; ++s) {
          const at::Tensor in_slot = kept.select(1, s).to(at::kFloat).view({n, 1, 1, 1});
          strip.narrow(3, s * height, slices.size(3)).add_(slices.index_select(0, sequence.select(1, s)).mul_(in_slot));
        }
        d.images = strip;
        break;
      }
      case TargetKind::pixel_class: {
        const at::Tensor inside = prototypes.select(1, 0).index_select(0, classes).gt(0);
        d.labels = inside.to(at::kLong).mul_(classes.add(1).view({n, 1, 1}));
        d.num_classes = num_classes + 1;
        break;
      }
    }
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

std::string fields_text(const Dataset& d) {
  std::string text;
  for (const auto& [name, field] : d.fields) {
    text += (text.empty() ? "" : ", ") + name + " (" + c10::toString(field.scalar_type());
    if (field.numel() > 0 && field.dim() == 1 && field.scalar_type() == at::kLong)
      text += ", " + std::to_string(field.min().item<int64_t>()) + " to " + std::to_string(field.max().item<int64_t>());
    text += ")";
  }
  return text;
}

Dataset subset(const Dataset& d, int64_t n) {
  if (n <= 0 || n >= d.size()) return d;
  Dataset s = d;
  if (d.images.defined()) s.images = d.images.narrow(0, 0, n);
  s.labels = d.labels.narrow(0, 0, n);
  for (auto& [name, field] : s.fields) field = field.narrow(0, 0, n);
  return s;
}

}  // namespace plugtrain::data
