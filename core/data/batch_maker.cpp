#include "data/batch_maker.h"

#include <algorithm>
#include <exception>
#include <mutex>
#include <utility>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "data/device_resident.h"
#include "data/sample_rng.h"

namespace plugtrain::data {

BatchMaker::ChannelMaps::ChannelMaps(const Dataset& d) {
  const auto channels = size_t(d.sample_shape.empty() ? 1 : d.sample_shape[0]);
  for (size_t c = 0; c < channels; ++c) {
    const bool given = c < d.normalization.mean.size();
    const double mean = given ? d.normalization.mean[c] : 0.0, std = given ? d.normalization.std[c] : 1.0;
    byte_scale.push_back(float(1.0 / (255.0 * std)));
    unit_scale.push_back(float(1.0 / std));
    shift.push_back(float(-mean / std));
    erase_fill.push_back(float(mean));
  }
}

BatchMaker::BatchMaker(const Dataset& data, AugmentOptions augmentation, uint64_t seed, int64_t rank,
                       at::MemoryFormat memory_format, bool pin)
    : data_(data), augmenter_(std::move(augmentation)), maps_(data), seed_(seed), rank_(rank),
      memory_format_(memory_format), pin_(pin) {}

void BatchMaker::make_sample(int64_t epoch, int64_t position, int64_t sample, float* out) const {
  const int64_t c = data_.sample_shape[0], plane = data_.sample_shape[1] * data_.sample_shape[2];
  const int64_t numel = c * plane;
  thread_local std::vector<uint8_t> decoded;
  thread_local std::vector<float> scratch;
  if (!data_.bytes()) {  // float data, already normalised
    const float* src = data_.images.const_data_ptr<float>() + sample * numel;
    std::copy(src, src + numel, out);
    if (!augmenter_.empty()) {
      SampleRng rng(SampleRng::seed_of(seed_, uint64_t(epoch), uint64_t(rank_), uint64_t(position)));
      augmenter_.apply({out, c, data_.sample_shape[1], data_.sample_shape[2]}, rng, std::vector<float>(size_t(c), 0.0f),
                       scratch);
    }
    return;
  }
  const uint8_t* src;
  if (data_.images.defined()) {
    src = data_.images.const_data_ptr<uint8_t>() + sample * numel;
  } else {
    decoded.resize(size_t(numel));
    data_.decode(sample, decoded.data());
    src = decoded.data();
  }
  if (augmenter_.empty()) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const float a = maps_.byte_scale[size_t(ch)], b = maps_.shift[size_t(ch)];
      const uint8_t* s = src + ch * plane;
      float* o = out + ch * plane;
      for (int64_t i = 0; i < plane; ++i) o[i] = float(s[i]) * a + b;
    }
    return;
  }
  for (int64_t i = 0; i < numel; ++i) out[i] = float(src[i]) * (1.0f / 255.0f);
  SampleRng rng(SampleRng::seed_of(seed_, uint64_t(epoch), uint64_t(rank_), uint64_t(position)));
  augmenter_.apply({out, c, data_.sample_shape[1], data_.sample_shape[2]}, rng, maps_.erase_fill, scratch);
  for (int64_t ch = 0; ch < c; ++ch) {
    const float a = maps_.unit_scale[size_t(ch)], b = maps_.shift[size_t(ch)];
    float* o = out + ch * plane;
    for (int64_t i = 0; i < plane; ++i) o[i] = o[i] * a + b;
  }
}

int64_t Batch::size() const { return deferred ? deferred->places.samples.size(0) : targets.size(0); }

Batch Batch::gathered() const {
  return deferred ? deferred->source->gather(deferred->places, deferred->memory_format) : *this;
}

Batch Batch::narrow(int64_t begin, int64_t count) const {
  if (deferred) {
    Batch part;
    part.deferred = std::make_shared<DeferredGather>(
        DeferredGather{deferred->source, deferred->places.narrow(begin, count), deferred->memory_format});
    return part;
  }
  Batch part{inputs.narrow(0, begin, count), targets.narrow(0, begin, count), {}};
  for (const auto& [name, field] : fields) part.fields[name] = field.narrow(0, begin, count);
  return part;
}

Batch BatchMaker::make(const at::Tensor& order, int64_t begin, int64_t count, int64_t epoch) const {
  if (data_.tokens()) return gather_windows(order.narrow(0, begin, count));
  std::vector<int64_t> shape{count};
  shape.insert(shape.end(), data_.sample_shape.begin(), data_.sample_shape.end());
  Batch b;
  const bool channels_last = memory_format_ == at::MemoryFormat::ChannelsLast;
  b.inputs = at::empty(shape, at::TensorOptions().dtype(at::kFloat).pinned_memory(pin_).memory_format(memory_format_));
  b.targets = data_.labels.index_select(0, order.narrow(0, begin, count));
  if (pin_) b.targets = b.targets.pin_memory();
  for (const auto& [name, field] : data_.fields) {
    at::Tensor rows = field.index_select(0, order.narrow(0, begin, count));
    b.fields[name] = pin_ ? rows.pin_memory() : rows;
  }
  const int64_t numel = b.inputs.numel() / std::max<int64_t>(1, count);
  const int64_t* samples = order.const_data_ptr<int64_t>() + begin;
  float* out = b.inputs.data_ptr<float>();
  std::exception_ptr error;
  std::mutex error_mutex;
  at::parallel_for(0, count, 8, [&](int64_t from, int64_t to) {
    try {
      thread_local std::vector<float> planar;  // channels last: one C,H,W sample, then interleaved
      for (int64_t k = from; k < to; ++k) {
        if (!channels_last) {
          make_sample(epoch, begin + k, samples[k], out + k * numel);
          continue;
        }
        planar.resize(size_t(numel));
        make_sample(epoch, begin + k, samples[k], planar.data());
        const int64_t c = data_.sample_shape[0], plane = numel / c;
        float* dst = out + k * numel;
        for (int64_t p = 0; p < plane; ++p)
          for (int64_t ch = 0; ch < c; ++ch) dst[p * c + ch] = planar[size_t(ch * plane + p)];
      }
    } catch (...) {
      // The first one is rethrown below, after every chunk has ended.
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  });
  if (error) std::rethrow_exception(error);
  return b;
}

// Token windows: rows of (overlapping, strided) views of one stream, gathered into a new
// contiguous batch; nothing to augment or normalise.
Batch BatchMaker::gather_windows(const at::Tensor& samples) const {
  Batch b;
  b.inputs = data_.images.index_select(0, samples);
  b.targets = data_.labels.index_select(0, samples);
  for (const auto& [name, field] : data_.fields) b.fields[name] = field.index_select(0, samples);
  if (pin_) {
    b.inputs = b.inputs.pin_memory();
    b.targets = b.targets.pin_memory();
    for (auto& [name, field] : b.fields) field = field.pin_memory();
  }
  return b;
}

}  // namespace plugtrain::data
