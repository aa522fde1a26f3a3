#include "data/from_experiment.h"

namespace plugtrain::data {

namespace {

std::array<double, 2> pair_of(const std::vector<double>& v, std::array<double, 2> fallback) {
  return v.size() == 2 ? std::array<double, 2>{v[0], v[1]} : fallback;
}

}  // namespace

DataOptions data_options(const Experiment& e) {
  DataOptions o;
  o.dataset_options = e.data.dataset_options;  // the data set itself: the caller sets it from the plugins
  o.path = e.data.path;
  o.image_size = e.data.image_size;
  o.cache = e.data.cache;
  // Decoding a cache happens before training: every core unless data.workers says otherwise.
  o.decode_threads = e.data.workers.value_or(0) > 0 ? int(*e.data.workers) : 0;
  o.skip_bad = e.data.skip_bad;
  o.normalize = e.data.normalize;
  o.mean = e.data.mean;
  o.std = e.data.std;
  o.seed = static_cast<uint64_t>(e.experiment.seed);
  return o;
}

AugmentOptions augment_options(const AugmentConfig& c) {
  AugmentOptions a;
  a.order = c.order;
  a.crop_padding = c.crop_padding;
  a.crop_padding_mode = c.crop_padding_mode;
  a.flip_p = c.flip_p;
  a.resized_crop_scale = pair_of(c.resized_crop_scale, a.resized_crop_scale);
  a.resized_crop_ratio = pair_of(c.resized_crop_ratio, a.resized_crop_ratio);
  a.rotation_degrees = c.rotation_degrees;
  a.translate = pair_of(c.translate, a.translate);
  a.brightness = c.jitter_brightness;
  a.contrast = c.jitter_contrast;
  a.saturation = c.jitter_saturation;
  a.erasing_p = c.erasing_p;
  a.erasing_scale = pair_of(c.erasing_scale, a.erasing_scale);
  a.erasing_ratio = pair_of(c.erasing_ratio, a.erasing_ratio);
  return a;
}

}  // namespace plugtrain::data
