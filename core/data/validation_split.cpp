#include "data/validation_split.h"

#include <cmath>
#include <string>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "data/data_error.h"

namespace plugtrain::data {

namespace {

// The samples `index` (int64, CPU) of d, as a data set of their own.
Dataset take(const Dataset& d, const at::Tensor& index) {
  Dataset part = d;
  if (d.images.defined()) part.images = d.images.index_select(0, index).contiguous();
  part.labels = d.labels.index_select(0, index).contiguous();
  for (auto& [name, field] : part.fields) field = field.index_select(0, index).contiguous();
  if (d.decode) {
    // Sample i of the part is sample index[i] of the files.
    const std::vector<int64_t> original(index.data_ptr<int64_t>(), index.data_ptr<int64_t>() + index.numel());
    part.decode = [decode = d.decode, original](int64_t i, uint8_t* pixels) { decode(original.at(i), pixels); };
  }
  return part;
}

}  // namespace

Dataset split_validation(Dataset& train, double fraction, uint64_t seed) {
  const int64_t n = train.size();
  const int64_t held = static_cast<int64_t>(std::llround(fraction * double(n)));
  if (held < 1 || held >= n)
    throw DataError("data.val_fraction " + std::to_string(fraction) + " of " + std::to_string(n) +
                    " training samples leaves " + (held < 1 ? "no validation sample" : "no training sample") +
                    ": choose a fraction that holds out at least one sample and keeps at least one");
  // Its own generator, so the split does not move the run's other random streams.
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed ^ 0x76616c5f73706c74ull);  // "val_splt"
  const at::Tensor order = at::randperm(n, generator, at::TensorOptions().dtype(at::kLong));
  // Each part in the data set's own order: sorted indices keep files read in sequence.
  const at::Tensor val_index = std::get<0>(order.narrow(0, 0, held).sort());
  const at::Tensor train_index = std::get<0>(order.narrow(0, held, n - held).sort());
  Dataset val = take(train, val_index);
  train = take(train, train_index);
  return val;
}

}  // namespace plugtrain::data
