// A data-set query that names a path and nothing else, as the host's would for a reader with no
// image options: for calling a reader directly (its tests and fuzzers).
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "plugtrain/dataset.h"

namespace bundled_datasets {

class PathQuery final : public plugtrain::DatasetQuery {
 public:
  explicit PathQuery(std::string path, std::uint64_t seed = 1) : path_(std::move(path)), seed_(seed) {}
  std::string path() const override { return path_; }
  std::uint64_t seed() const override { return seed_; }
  std::int64_t image_size() const override { return 0; }
  int cache() const override { return -1; }
  int decode_threads() const override { return 1; }
  bool skip_bad() const override { return false; }
  plugtrain::DatasetTargets task_targets() const override { return plugtrain::DatasetTargets::next_token; }

 private:
  std::string path_;
  std::uint64_t seed_;
};

}  // namespace bundled_datasets
