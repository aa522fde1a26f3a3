// The data-set query the host would pass a reader (plugtrain/dataset.h), for the readers' fuzzers.
#pragma once

#include <string>
#include <utility>

#include "plugtrain/dataset.h"

namespace plugtrain::fuzz {

class Query final : public DatasetQuery {
 public:
  explicit Query(std::string path) : path_(std::move(path)) {}
  std::string path() const override { return path_; }
  std::uint64_t seed() const override { return 0; }
  std::int64_t image_size() const override { return 0; }
  int cache() const override { return -1; }
  int decode_threads() const override { return 1; }
  bool skip_bad() const override { return false; }
  DatasetTargets task_targets() const override { return DatasetTargets::next_token; }

 private:
  std::string path_;
};

}  // namespace plugtrain::fuzz
