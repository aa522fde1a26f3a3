#include "data/dataset.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "data/data_error.h"
#include "util/format.h"

namespace plugtrain::data {
namespace {

namespace fs = std::filesystem;

}  // namespace

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
