// A data set a plugin registers (plugtrain/dataset.h; the bundled ones too), read into
// the host's Dataset: its inputs and targets checked, one line naming the data set, its plugin
// and the split for anything wrong.
#pragma once

#include <string>

#include "data/load_dataset.h"
#include "plugtrain/dataset.h"

namespace plugtrain::data {

// What the experiment says about reading, as a data set's reader and path check ask it.
class PluginQuery final : public DatasetQuery {
 public:
  explicit PluginQuery(const DataOptions& o) : o_(o) {}
  std::string path() const override { return o_.path.string(); }
  std::uint64_t seed() const override { return o_.seed; }
  std::int64_t image_size() const override { return o_.image_size; }
  int cache() const override { return !o_.cache ? -1 : *o_.cache == ImageCache::none ? 0 : 1; }
  int decode_threads() const override { return o_.decode_threads; }
  bool skip_bad() const override { return o_.skip_bad; }
  DatasetTargets task_targets() const override { return static_cast<DatasetTargets>(int(o_.task_targets)); }  // the same order

 private:
  const DataOptions& o_;
};

// Its splits, unnormalised (load_dataset normalises them as it does every data set): read by
// the data set's reader, then checked.
LoadedData load_plugin_dataset(const DataOptions& options);

}  // namespace plugtrain::data
