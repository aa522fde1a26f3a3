// What the bundled data-sets plugin's sets share: each set's spec (with its rules), and drawing
// both splits of Fashion-MNIST with generators seeded by experiment.seed.
#pragma once

#include <string>
#include <vector>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Generator.h>

#include "idx_files.h"
#include "plugtrain/dataset.h"

namespace fashion_mnist_tasks {

std::vector<plugtrain::DatasetSpec> strip_and_pair_sets();     // strips_and_pairs.cpp
std::vector<plugtrain::DatasetSpec> rotation_and_mask_sets();  // rotation_and_masks.cpp

using plugtrain::DatasetQuery;
using plugtrain::DatasetRead;
using plugtrain::DatasetReadSplit;
using plugtrain::DatasetSpec;
using plugtrain::DatasetTargets;
using plugtrain::OptionRule;
using plugtrain::Options;
using plugtrain::OptionType;

constexpr std::int64_t kSide = 28;

// Each split's images, drawn `count` samples at a time by `make` with its own generator, with
// targets of the set's kind.
template <class Make>
inline DatasetRead both_splits(const DatasetQuery& query, const Options& options, DatasetTargets targets,
                               const std::string& what, Make make) {
  DatasetRead out;
  out.targets = targets;
  const std::string folder = query.path();
  at::Generator train_gen = at::make_generator<at::CPUGeneratorImpl>(query.seed() * 2 + 1);
  at::Generator test_gen = at::make_generator<at::CPUGeneratorImpl>(query.seed() * 2 + 2);
  out.train = make(read_split(folder, "train"), options.integer("train_size"), train_gen);
  out.test = make(read_split(folder, "t10k"), options.integer("test_size"), test_gen);
  out.source = what + " of Fashion-MNIST from " + folder;
  return out;
}

// A set whose options are its sample counts (train_size, test_size: `train`, `test` by
// default) and `extra`, with their rules; the caller gives it its reader.
inline DatasetSpec task_set(std::string name, std::string description, DatasetTargets targets, std::int64_t train,
                            std::int64_t test, std::vector<plugtrain::OptionSpec> extra = {},
                            std::vector<OptionRule> extra_rules = {}) {
  DatasetSpec set;
  set.name = std::move(name);
  set.description = std::move(description);
  set.targets = targets;
  set.options = {{"train_size", OptionType::integer, train, "training samples drawn"},
                 {"test_size", OptionType::integer, test, "test samples drawn"}};
  set.options.insert(set.options.end(), extra.begin(), extra.end());
  set.rules = {OptionRule("train_size").at_least(1).at_most(1e7), OptionRule("test_size").at_least(1).at_most(1e7)};
  set.rules.insert(set.rules.end(), extra_rules.begin(), extra_rules.end());
  return set;
}

// A data set whose classes are Fashion-MNIST's ten.
inline DatasetRead with_item_classes(DatasetRead data) {
  data.num_classes = 10;
  data.class_names = class_names();
  return data;
}

}  // namespace fashion_mnist_tasks
