// fashion-mnist-strips (sequence) and fashion-mnist-pairs (multilabel): items side by side.
#include <ATen/ATen.h>

#include "task_sets.h"

namespace fashion_mnist_tasks {

namespace {

// `n` rows of `slots` random items of `split` each; `used` says which slots hold one.
DatasetReadSplit side_by_side(const Split& split, std::int64_t n, std::int64_t slots, const at::Tensor& used,
                              at::Generator& gen) {
  const at::Tensor items = at::randint(split.images.size(0), {n, slots}, gen, at::kLong);
  at::Tensor images = split.images.index_select(0, items.flatten()).view({n, slots, 1, kSide, kSide});
  images = images.mul(used.view({n, slots, 1, 1, 1}).to(at::kByte));
  DatasetReadSplit out;
  out.inputs = images.permute({0, 2, 3, 1, 4}).reshape({n, 1, kSide, slots * kSide}).contiguous();
  out.targets = split.labels.index_select(0, items.flatten()).view({n, slots});
  return out;
}

DatasetSpec strips() {
  DatasetSpec set =
      task_set("fashion-mnist-strips",
               "strips of 1 to max_items Fashion-MNIST items side by side (28 x 28 max_items); their classes in order",
               DatasetTargets::sequence, 20000, 2000,
               {{"max_items", OptionType::integer, std::int64_t(8), "most items in a strip (the width is 28 x this)"}},
               {OptionRule("max_items").at_least(1).at_most(32)});
  set.read = [](const DatasetQuery& query, const Options& options) {
    const std::int64_t slots = options.integer("max_items");
    const auto make = [&](const Split& s, std::int64_t n, at::Generator& gen) {
      const at::Tensor count = at::randint(1, slots + 1, {n}, gen, at::kLong);
      const at::Tensor used = at::arange(slots).unsqueeze(0).lt(count.unsqueeze(1));
      DatasetReadSplit split = side_by_side(s, n, slots, used, gen);
      split.targets = at::where(used, split.targets, at::full({}, -1, at::kLong));
      return split;
    };
    return with_item_classes(both_splits(query, options, DatasetTargets::sequence, "strips", make));
  };
  return set;
}

DatasetSpec pairs() {
  DatasetSpec set =
      task_set("fashion-mnist-pairs",
               "two Fashion-MNIST items side by side (28 x 56); both classes (one when they are the same)",
               DatasetTargets::multi_hot, 30000, 3000);
  set.read = [](const DatasetQuery& query, const Options& options) {
    const auto make = [](const Split& s, std::int64_t n, at::Generator& gen) {
      DatasetReadSplit split = side_by_side(s, n, 2, at::ones({n, 2}, at::kBool), gen);
      split.targets = at::one_hot(split.targets, 10).amax(1).to(at::kFloat);
      return split;
    };
    return with_item_classes(both_splits(query, options, DatasetTargets::multi_hot, "pairs", make));
  };
  return set;
}

}  // namespace

std::vector<DatasetSpec> strip_and_pair_sets() { return {strips(), pairs()}; }

}  // namespace fashion_mnist_tasks
