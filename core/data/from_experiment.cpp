#include "data/from_experiment.h"

namespace plugtrain::data {

namespace {

std::array<double, 2> pair_of(const std::vector<double>& v, std::array<double, 2> fallback) {
  return v.size() == 2 ? std::array<double, 2>{v[0], v[1]} : fallback;
}

}  // namespace

DataOptions data_options(const Experiment& e) {
  DataOptions o;
  o.dataset = e.dataset;
  o.path = e.data_path;
  o.label = e.data_label;
  o.image_size = e.image_size;
  o.cache = e.data_cache;
  // Decoding a cache happens before training: every core unless data.workers says otherwise.
  o.decode_threads = e.data_workers > 0 ? int(e.data_workers) : 0;
  o.skip_bad = e.skip_bad;
  o.normalize = e.normalize;
  o.mean = e.data_mean;
  o.std = e.data_std;
  o.synthetic_shape = e.synthetic_shape;
  o.synthetic_classes = e.synthetic_classes;
  o.synthetic_train_size = e.synthetic_train_size;
  o.synthetic_test_size = e.synthetic_test_size;
  o.seed = static_cast<uint64_t>(e.seed);
  return o;
}

AugmentOptions augment_options(const Experiment& e) {
  AugmentOptions a;
  a.order = e.augmentation;
  a.crop_padding = e.crop_padding;
  a.crop_padding_mode = padding_mode_named(e.crop_padding_mode);
  a.flip_p = e.flip_p;
  a.resized_crop_scale = pair_of(e.resized_crop_scale, a.resized_crop_scale);
  a.resized_crop_ratio = pair_of(e.resized_crop_ratio, a.resized_crop_ratio);
  a.rotation_degrees = e.rotation_degrees;
  a.translate = pair_of(e.translate, a.translate);
  a.brightness = e.jitter_brightness;
  a.contrast = e.jitter_contrast;
  a.saturation = e.jitter_saturation;
  a.erasing_p = e.erasing_p;
  a.erasing_scale = pair_of(e.erasing_scale, a.erasing_scale);
  a.erasing_ratio = pair_of(e.erasing_ratio, a.erasing_ratio);
  return a;
}

}  // namespace plugtrain::data
