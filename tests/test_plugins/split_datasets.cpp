// A data-sets plugin whose data sets have their own validation split:
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

DatasetRead read(const DatasetQuery& query, bool labelled_test) {
  const std::uint64_t seed = query.seed();
  torch::Generator gen = at::detail::createCPUGenerator(seed);
  const torch::Tensor prototypes = torch::randint(256, {kClasses, 1, 8, 8}, gen, torch::kFloat);
  DatasetRead r;
  r.train = make_split(400, seed + 1, prototypes);
  r.validation = make_split(120, seed + 2, prototypes);
  if (labelled_test) r.test = make_split(80, seed + 3, prototypes);
  r.num_classes = kClasses;
  r.source = labelled_test ? "three splits" : "val-only labels";
  return r;
}

DatasetSpec spec(const char* name, std::function<DatasetRead(const DatasetQuery&, const Options&)> reader) {
  DatasetSpec s;
  s.name = name;
  s.description = "test data with its own validation split";
  s.read = std::move(reader);
  s.validation_split = "val";
  return s;
}

void register_sets(Registrar& host) {
  host.add_dataset(spec("three-splits", [](const DatasetQuery& q, const Options&) { return read(q, true); }));
  host.add_dataset(spec("val-only-labelled", [](const DatasetQuery& q, const Options&) { return read(q, false); }));
  host.add_dataset(spec("empty-validation", [](const DatasetQuery& q, const Options&) {
    DatasetRead got = read(q, true);
    got.validation = DatasetReadSplit{};
    return got;
  }));
}

}  // namespace

PLUGTRAIN_PLUGIN(register_sets, PLUGTRAIN_KIND_DATASETS, "splitsets", "0.0.1",
                 "data sets with their own validation split")
