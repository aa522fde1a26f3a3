#include "data/load_dataset.h"

#include <algorithm>

#include <ATen/ATen.h>

#include "data/data_error.h"
#include "data/plugin_dataset.h"
#include "util/format.h"

namespace plugtrain::data {

namespace {

// The mean/std the loader normalises with, as the experiment asks.
void set_normalization(LoadedData& loaded, const DataOptions& o) {
  Dataset& train = loaded.data.train;
  if (!train.bytes()) return;  // synthetic: already normalised floats
  std::string note;
  std::optional<Normalization> settled = settled_normalization(o, size_t(train.sample_shape.at(0)), note);
  Normalization n;
  if (settled) {
    n = *settled;
    loaded.notes.push_back(note);
  } else if (train.images.defined()) {
    n = byte_statistics(train.images);
    loaded.notes.push_back("normalize: training set mean " + channel_text(n.mean) + ", std " + channel_text(n.std));
  } else {
    // Not in memory: the statistics of an evenly spaced sample of at most 5000 images.
    const int64_t count = std::min<int64_t>(5000, train.size()), stride = train.size() / count;
    const int64_t per = train.sample_shape[0] * train.sample_shape[1] * train.sample_shape[2];
    at::Tensor sample = at::empty({count, train.sample_shape[0], train.sample_shape[1], train.sample_shape[2]},
                                  at::TensorOptions().dtype(at::kByte));
    for (int64_t i = 0; i < count; ++i) train.decode(i * stride, sample.data_ptr<uint8_t>() + i * per);
    n = byte_statistics(sample);
    loaded.notes.push_back("normalize: mean " + channel_text(n.mean) + ", std " + channel_text(n.std) + " (from " +
                           std::to_string(count) + " training images)");
  }
  for (double s : n.std)
    if (!(s > 0)) throw DataError("data.std must be > 0 for every channel (got " + channel_text(n.std) + ")");
  train.normalization = loaded.data.test.normalization = loaded.data.val.normalization = n;
}

}  // namespace

std::optional<Normalization> settled_normalization(const DataOptions& o, size_t channels, std::string& note) {
  if (!o.mean.empty() || !o.std.empty()) {
    if (o.mean.size() != channels || o.std.size() != channels)
      throw DataError("data.mean and data.std need " + std::to_string(channels) + " values each (one per channel), got " +
                      std::to_string(o.mean.size()) + " and " + std::to_string(o.std.size()));
    note = "normalize: mean " + channel_text(o.mean) + ", std " + channel_text(o.std) + " (given)";
    return Normalization{o.mean, o.std};
  }
  if (o.normalize == Normalize::none) {
    note = "normalize: none (pixels scaled to [0, 1])";
    return Normalization{std::vector<double>(channels, 0.0), std::vector<double>(channels, 1.0)};
  }
  if (!o.stored) return std::nullopt;
  if (o.stored->mean.size() != channels || o.stored->std.size() != channels)
    throw DataError(o.stored_from + ": " + std::to_string(o.stored->mean.size()) + " channels stored, the data set has " +
                    std::to_string(channels));
  note = "normalize: training set mean " + channel_text(o.stored->mean) + ", std " + channel_text(o.stored->std) +
         " (stored in " + o.stored_from + " when the run began)";
  return o.stored;
}

std::string channel_text(const std::vector<double>& values) {
  std::string s;
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + fixed(values[i], 4);
  return s;
}

LoadedData load_dataset(const DataOptions& o) {
  if (!o.dataset) throw DataError("no data set to read (data.dataset names none that a loaded plugin registers)");
  LoadedData loaded = load_plugin_dataset(o);
  set_normalization(loaded, o);
  return loaded;
}

}  // namespace plugtrain::data
