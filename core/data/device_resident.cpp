#include "data/device_resident.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/List.h>

#include "data/batch_loader.h"
#include "data/data_error.h"
#include "data/sample_rng.h"

namespace plugtrain::data {

Status servable_on_device(const Dataset& data, const AugmentOptions& augmentation) {
  if (data.tokens()) return WhyNot{"token windows are gathered from the token stream on the host"};
  if (!data.images.defined())
    return WhyNot{"the images are decoded on demand (data.cache = \"none\", or too large for memory)"};
  for (const Augmentation step : augmentation.order)
    if (step != Augmentation::random_crop && step != Augmentation::horizontal_flip)
      return WhyNot{std::string("augmentation ") + word_of(step) +
                    " runs on the loader threads (the device does random_crop and horizontal_flip)"};
  return Status::fine();
}

int64_t bytes_on_device(const Dataset& data, const AugmentOptions& augmentation) {
  if (!data.images.defined() || data.tokens()) return 0;  // not servable on the device (servable_on_device)
  const int64_t n = data.images.size(0), c = data.images.size(1), h = data.images.size(2), w = data.images.size(3);
  const bool moves = !augmentation.order.empty();
  return n * c * (h + moves) * (w + moves) * int64_t(data.images.element_size()) + n * 8;
}

DeviceResident::DeviceResident(const Dataset& data, const AugmentOptions& augmentation, c10::Device device)
    : augmentation_(augmentation), moves_(!augmentation.order.empty()), shape_(data.sample_shape) {
  if (Status servable = servable_on_device(data, augmentation); !servable)
    throw DataError("data.on_device: " + servable.why_not());
  at::Tensor images = data.images;
  // One zero row and column at the end: where a map's -1 (a padding pixel) points.
  if (moves_) images = at::constant_pad_nd(images, {0, 1, 0, 1}, 0);
  images_ = images.to(device).contiguous();
  labels_ = data.labels.to(device);
  for (const auto& [name, field] : data.fields) fields_[name] = field.to(device);
  const int64_t channels = shape_.at(0);
  std::vector<float> scale(size_t(channels), 1.0f), shift(size_t(channels), 0.0f);
  if (data.bytes()) {
    // As the host loader's ChannelMaps: (v / 255 - mean) / std as v * scale + shift, where an
    // augmented sample is first put on the [0, 1] scale (below) and then scaled by 1 / std.
    for (int64_t c = 0; c < channels; ++c) {
      const bool given = size_t(c) < data.normalization.mean.size();
      const double mean = given ? data.normalization.mean[size_t(c)] : 0.0;
      const double std = given ? data.normalization.std[size_t(c)] : 1.0;
      scale[size_t(c)] = moves_ ? float(1.0 / std) : float(1.0 / (255.0 * std));
      shift[size_t(c)] = float(-mean / std);
    }
  }
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  if (moves_) channel_index_ = at::arange(channels, at::TensorOptions().dtype(at::kLong)).to(device);
  scale_ = at::tensor(scale, f32).view({1, channels, 1, 1}).to(device);
  shift_ = at::tensor(shift, f32).view({1, channels, 1, 1}).to(device);
}

int64_t DeviceResident::bytes() const { return images_.nbytes() + labels_.nbytes(); }

void DeviceResident::start_epoch(const at::Tensor& order, uint64_t seed, int64_t epoch, int64_t rank) {
  const c10::Device device = labels_.device();
  order_ = order.to(device);
  if (!moves_) return;
  const int64_t n = order.size(0), h = shape_[1], w = shape_[2];
  at::Tensor rows = at::empty({n, h}, at::kLong), cols = at::empty({n, w}, at::kLong);
  int64_t* r = rows.data_ptr<int64_t>();
  int64_t* c = cols.data_ptr<int64_t>();
  at::parallel_for(0, n, 256, [&](int64_t from, int64_t to) {
    for (int64_t p = from; p < to; ++p) {
      SampleRng rng(SampleRng::seed_of(seed, uint64_t(epoch), uint64_t(rank), uint64_t(p)));
      pixel_source_maps(augmentation_, rng, h, w, r + p * h, c + p * w);
    }
  });
  // A padding pixel (-1) reads the zero row and column at index h and w.
  rows.masked_fill_(rows < 0, h);
  cols.masked_fill_(cols < 0, w);
  rows_ = rows.to(device);
  cols_ = cols.to(device);
}

GatherPlaces GatherPlaces::narrow(int64_t begin, int64_t count) const {
  GatherPlaces part{samples.narrow(0, begin, count), {}, {}};
  if (rows.defined()) {
    part.rows = rows.narrow(0, begin, count);
    part.cols = cols.narrow(0, begin, count);
  }
  return part;
}

GatherPlaces DeviceResident::places(int64_t begin, int64_t count) const {
  return GatherPlaces{order_, rows_, cols_}.narrow(begin, count);
}

Batch DeviceResident::batch(int64_t begin, int64_t count, at::MemoryFormat memory_format) const {
  return gather(places(begin, count), memory_format);
}

Batch DeviceResident::gather(const GatherPlaces& places, at::MemoryFormat memory_format) const {
  const at::Tensor& samples = places.samples;
  const int64_t count = samples.size(0);
  Batch b;
  b.targets = labels_.index_select(0, samples);
  for (const auto& [name, field] : fields_) b.fields[name] = field.index_select(0, samples);
  at::Tensor pixels;
  if (!moves_) {
    pixels = images_.index_select(0, samples);
  } else {
    const int64_t channels = shape_[0], h = shape_[1], w = shape_[2];
    c10::List<std::optional<at::Tensor>> index;
    index.push_back(samples.view({count, 1, 1, 1}));
    index.push_back(channel_index_.view({1, channels, 1, 1}));
    index.push_back(places.rows.view({count, 1, h, 1}));
    index.push_back(places.cols.view({count, 1, 1, w}));
    pixels = at::index(images_, index);
  }
  if (pixels.scalar_type() == at::kByte) {
    at::Tensor x = pixels.to(at::kFloat);
    if (moves_) x.mul_(1.0f / 255.0f);
    b.inputs = x.mul_(scale_).add_(shift_);
  } else {
    b.inputs = pixels;  // float data: already normalised
  }
  if (memory_format == at::MemoryFormat::ChannelsLast) b.inputs = b.inputs.contiguous(memory_format);
  return b;
}

}  // namespace plugtrain::data
