// fashion-mnist-rotation (regression) and fashion-mnist-masks (segmentation): one item each.
#include <cmath>

#include <ATen/ATen.h>

#include "task_sets.h"

namespace fashion_mnist_tasks {

namespace {

// `n` random items of `split`, as floats in [0, 1], with their labels.
std::pair<at::Tensor, at::Tensor> draw(const Split& split, std::int64_t n, at::Generator& gen) {
  const at::Tensor items = at::randint(split.images.size(0), {n}, gen, at::kLong);
  return {split.images.index_select(0, items).to(at::kFloat).div_(255), split.labels.index_select(0, items)};
}

DatasetSpec rotation() {
  DatasetSpec set =
      task_set("fashion-mnist-rotation",
               "a Fashion-MNIST item rotated about its centre (bilinear); the angle in degrees, counter-clockwise",
               DatasetTargets::real, 30000, 3000,
               {{"max_degrees", OptionType::real, 45.0, "angles are drawn uniformly from [-max_degrees, max_degrees]"}},
               {OptionRule("max_degrees").above(0).at_most(180)});
  set.read = [](const DatasetQuery& query, const Options& options) {
    const double most = options.real("max_degrees");
    const auto make = [&](const Split& s, std::int64_t n, at::Generator& gen) {
      auto [images, labels] = draw(s, n, gen);
      const at::Tensor degrees = at::rand({n}, gen, at::kFloat).mul_(2 * most).sub_(most);
      const at::Tensor radians = degrees * float(M_PI / 180.0);
      // affine_grid maps output to input coordinates: rotating the image by +a samples it at -a.
      const at::Tensor c = radians.cos(), sn = radians.sin(), zero = at::zeros({n});
      const at::Tensor theta = at::stack({at::stack({c, -sn, zero}, 1), at::stack({sn, c, zero}, 1)}, 1);
      const at::Tensor grid = at::affine_grid_generator(theta, {n, 1, kSide, kSide}, /*align_corners=*/false);
      const at::Tensor rotated = at::grid_sampler(images, grid, /*bilinear*/ 0, /*zeros*/ 0, false);
      DatasetReadSplit split;
      split.inputs = rotated.mul(255).round_().clamp_(0, 255).to(at::kByte);
      split.targets = degrees.unsqueeze(1);
      return split;
    };
    return both_splits(query, options, DatasetTargets::real, "rotated items", make);
  };
  return set;
}

DatasetSpec masks() {
  DatasetSpec set =
      task_set("fashion-mnist-masks",
               "a Fashion-MNIST item and its mask: its own pixels (above the threshold) take its class + 1, "
               "the background 0 (11 classes)",
               DatasetTargets::pixel_class, 60000, 10000,
               {{"threshold", OptionType::real, 0.1, "a pixel brighter than this (of 1) belongs to the item"}},
               {OptionRule("threshold").above(0).below(1)});
  set.read = [](const DatasetQuery& query, const Options& options) {
    const double threshold = options.real("threshold");
    const auto make = [&](const Split& s, std::int64_t n, at::Generator& gen) {
      auto [images, labels] = draw(s, n, gen);
      DatasetReadSplit split;
      split.inputs = images.mul(255).round_().to(at::kByte);
      split.targets = images.squeeze(1).gt(threshold).to(at::kLong).mul_(labels.add(1).view({n, 1, 1}));
      return split;
    };
    DatasetRead out = both_splits(query, options, DatasetTargets::pixel_class, "items with masks", make);
    out.num_classes = 11;
    out.class_names = {"background"};
    for (const std::string& name : class_names()) out.class_names.push_back(name);
    return out;
  };
  return set;
}

}  // namespace

std::vector<DatasetSpec> rotation_and_mask_sets() { return {rotation(), masks()}; }

}  // namespace fashion_mnist_tasks
