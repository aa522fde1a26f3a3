#include "readers/synthetic.h"

#include <algorithm>
#include <utility>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "data/data_error.h"

namespace plugtrain::data {
namespace {

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

DatasetPair make_synthetic(std::vector<int64_t> sample_shape, int64_t num_classes, int64_t train_size,
                           int64_t test_size, uint64_t seed, DatasetTargets targets) {
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
  const at::Tensor pattern = targets == DatasetTargets::real ? at::randn(sample_shape, gen, f32) : at::Tensor();
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
      case DatasetTargets::class_index: d.labels = classes; break;
      case DatasetTargets::multi_hot: {
        const at::Tensor second = at::randint(num_classes, {n}, gen, i64);
        const at::Tensor distinct = second.ne(classes);
        d.images.add_(prototypes.index_select(0, second).mul_(distinct.to(at::kFloat).view({n, 1, 1, 1})));
        d.labels = at::one_hot(classes, num_classes).logical_or(at::one_hot(second, num_classes)).to(at::kFloat);
        break;
      }
      case DatasetTargets::real: {
        d.labels = at::rand({n, 1}, gen, f32);
        d.images.add_(pattern.unsqueeze(0) * d.labels.mul(4).sub(2).view({n, 1, 1, 1}));
        d.num_classes = 0;
        break;
      }
      case DatasetTargets::sequence: {
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
      case DatasetTargets::pixel_class: {
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

}  // namespace plugtrain::data
