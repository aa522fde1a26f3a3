// A data-sets plugin whose data sets have their own validation split (SDK 3.8):
//   three-splits       train 400, val 120, test 80: learnable 8x8 byte images of 4 classes
//   val-only-labelled  the same train and val, and a test split without labels (TinyImageNet's case)
//   empty-validation   registered with a validation split, but its reader fills none
// Each class is a fixed byte pattern plus seeded noise, so a small MLP learns it in an epoch.
#include <cstdint>

#include <torch/torch.h>

#include "plugtrain/dataset.h"

namespace {

using namespace plugtrain;

constexpr std::int64_t kClasses = 4;

DatasetReadSplit make_split(std::int64_t n, std::uint64_t seed, const torch::Tensor& prototypes) {
  torch::Generator gen = at::detail::createCPUGenerator(seed);
  DatasetReadSplit s;
  s.targets = torch::randint(kClasses, {n}, gen, torch::kLong);
  const torch::Tensor noise = torch::randn({n, 1, 8, 8}, gen) * 30.0;
  s.inputs = (prototypes.index_select(0, s.targets) + noise).clamp(0, 255).to(torch::kByte);
  return s;
}

DatasetRead read(const DatasetRequest& request, DatasetValidation& validation, bool labelled_test) {
  torch::Generator gen = at::detail::createCPUGenerator(request.seed);
  const torch::Tensor prototypes = torch::randint(256, {kClasses, 1, 8, 8}, gen, torch::kFloat);
  DatasetRead r;
  r.train = make_split(400, request.seed + 1, prototypes);
  validation.val = make_split(120, request.seed + 2, prototypes);
  validation.split = "val";
  if (labelled_test) r.test = make_split(80, request.seed + 3, prototypes);
  r.num_classes = kClasses;
  r.source = labelled_test ? "three splits" : "val-only labels";
  return r;
}

DatasetSpec spec(const char* name) {
  DatasetSpec s;
  s.name = name;
  s.description = "test data with its own validation split";
  return s;
}

void register_sets(DatasetRegistry& registry) {
  registry.add_reader_with_validation(
      spec("three-splits"), {},
      [](const DatasetRequest& r, const DatasetReadSettings&, const Options&, DatasetValidation& v) { return read(r, v, true); },
      {});
  registry.add_reader_with_validation(
      spec("val-only-labelled"), {},
      [](const DatasetRequest& r, const DatasetReadSettings&, const Options&, DatasetValidation& v) { return read(r, v, false); },
      {});
  registry.add_reader_with_validation(
      spec("empty-validation"), {},
      [](const DatasetRequest& r, const DatasetReadSettings&, const Options&, DatasetValidation& v) {
        DatasetRead got = read(r, v, true);
        v.val = DatasetReadSplit{};
        return got;
      },
      {});
}

}  // namespace

PLUGTRAIN_DATASETS_PLUGIN(register_sets, "splitsets", "0.0.1", "data sets with their own validation split")
