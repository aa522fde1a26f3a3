#include "describe/data_report.h"

#include <algorithm>
#include <map>
#include <ostream>

#include <ATen/ATen.h>

#include "data/batch_loader.h"
#include "data/from_experiment.h"
#include "describe/bitmap_font.h"
#include "util/format.h"

namespace plugtrain {

namespace {

std::string class_name(const data::Dataset& d, int64_t k) {
  return k < int64_t(d.class_names.size()) ? d.class_names[size_t(k)] : std::to_string(k);
}

// "500 each" or "min 480 (cat), max 520 (dog)"; for other targets, what they are.
std::string per_class_text(const data::Dataset& d) {
  switch (d.target_kind) {
    case DatasetTargets::class_index: break;
    case DatasetTargets::multi_hot:
      return "labels per sample " + fixed(d.labels.sum(1).to(at::kDouble).mean().item<double>(), 2) + " on average";
    case DatasetTargets::real: return "targets " + shape_text(d.labels.sizes());
    case DatasetTargets::pixel_class: return "masks " + shape_text(d.labels.sizes());
    case DatasetTargets::next_token: return "windows of " + std::to_string(d.labels.size(1)) + " tokens";
    case DatasetTargets::sequence:
      return "sequences of " + std::to_string(d.labels.ge(0).sum(1).min().item<int64_t>()) + " to " +
             std::to_string(d.labels.ge(0).sum(1).max().item<int64_t>()) + " classes";
  }
  if (d.size() == 0) return "empty";
  const at::Tensor counts = at::bincount(d.labels, {}, d.num_classes);
  const int64_t lo = counts.min().item<int64_t>(), hi = counts.max().item<int64_t>();
  if (lo == hi) return std::to_string(lo) + " per class";
  return "per class min " + std::to_string(lo) + " (" + class_name(d, counts.argmin().item<int64_t>()) + "), max " +
         std::to_string(hi) + " (" + class_name(d, counts.argmax().item<int64_t>()) + ")";
}

// A sample's target as a grid label: its class; the classes of a set or a sequence; a value.
std::string target_text(const data::Dataset& d, const at::Tensor& target) {
  switch (d.target_kind) {
    case DatasetTargets::class_index: return class_name(d, target.item<int64_t>());
    case DatasetTargets::multi_hot:
    case DatasetTargets::sequence: {
      const at::Tensor classes =
          d.target_kind == DatasetTargets::sequence ? target.masked_select(target.ge(0)) : target.nonzero().flatten();
      std::string text;
      for (int64_t k = 0; k < classes.numel(); ++k) text += (k ? " " : "") + class_name(d, classes[k].item<int64_t>());
      return text;
    }
    case DatasetTargets::real: return fixed(target.flatten()[0].item<double>(), 2);
    case DatasetTargets::pixel_class:
    case DatasetTargets::next_token: return "";
  }
  return "";
}

std::string augmentation_text(const Experiment& e) {
  if (e.data.augment.order.empty()) return "none";
  std::string s;
  for (const Augmentation step : e.data.augment.order) {
    s += s.empty() ? "" : ", ";
    s += word_of(step);
    if (step == Augmentation::random_crop) s += " (padding " + std::to_string(e.data.augment.crop_padding) + " " + word_of(e.data.augment.crop_padding_mode) + ")";
    if (step == Augmentation::horizontal_flip) s += " (p " + fixed(e.data.augment.flip_p, 2) + ")";
    if (step == Augmentation::random_resized_crop)
      s += " (scale " + fixed(e.data.augment.resized_crop_scale.at(0), 2) + "-" + fixed(e.data.augment.resized_crop_scale.at(1), 2) + ", ratio " +
           fixed(e.data.augment.resized_crop_ratio.at(0), 2) + "-" + fixed(e.data.augment.resized_crop_ratio.at(1), 2) + ")";
    if (step == Augmentation::rotation) s += " (±" + fixed(e.data.augment.rotation_degrees, 0) + " degrees)";
    if (step == Augmentation::translate) s += " (" + fixed(e.data.augment.translate.at(0), 2) + " x, " + fixed(e.data.augment.translate.at(1), 2) + " y)";
    if (step == Augmentation::color_jitter)
      s += " (brightness " + fixed(e.data.augment.jitter_brightness, 2) + ", contrast " + fixed(e.data.augment.jitter_contrast, 2) +
           ", saturation " + fixed(e.data.augment.jitter_saturation, 2) + ")";
    if (step == Augmentation::random_erasing) s += " (p " + fixed(e.data.augment.erasing_p, 2) + ")";
  }
  return s;
}

}  // namespace

void print_data_report(const Experiment& e, const data::LoadedData& loaded, std::ostream& out) {
  const data::Dataset& train = loaded.data.train;
  const data::Dataset& test = loaded.data.test;
  out << "data: " << loaded.source << "\n";
  out << "splits: train " << train.size() << " (" << per_class_text(train) << "), ";
  if (!loaded.own_val_split.empty()) {
    // What the data set's own val split does in a run (data/splits in docs/experiment.md).
    const bool held_out = e.data.val_fraction > 0;
    const char* role = !held_out ? "validates" : loaded.test_unlabelled ? "the test split: data.val_fraction validates"
                                                                         : "not used: data.val_fraction validates";
    out << loaded.own_val_split << " " << loaded.data.val.size() << " (" << per_class_text(loaded.data.val) << "; " << role
        << "), ";
  }
  if (loaded.test_unlabelled)
    out << "no labelled test split\n";
  else
    out << loaded.test_split << " " << test.size() << " (" << per_class_text(test) << ")\n";
  if (const std::string fields = data::fields_text(train); !fields.empty()) out << "fields: " << fields << "\n";
  if (train.tokens()) {  // a vocabulary's entries are characters (newlines among them), not names to list
    out << "sample: " << train.sample_shape.at(0) << " token ids (int64), vocabulary " << train.num_classes << "\n";
    for (const auto& note : loaded.notes) out << note << "\n";
    return;
  }
  out << "classes: " << train.num_classes;
  const int64_t shown = std::min<int64_t>(train.num_classes, 20);
  for (int64_t k = 0; k < shown; ++k) out << (k ? ", " : ": ") << k << " " << class_name(train, k);
  if (shown < train.num_classes) out << ", ... " << train.num_classes - 1 << " " << class_name(train, train.num_classes - 1);
  out << "\n";
  const auto& s = train.sample_shape;
  out << "sample: " << s.at(0) << "x" << s.at(1) << "x" << s.at(2) << " (C x H x W), "
      << (train.bytes() ? "uint8 pixels" : "float32, normalised") << "\n";
  if (train.bytes()) {
    const int64_t samples = train.size() + (loaded.test_unlabelled ? 0 : test.size()) + loaded.data.val.size();
    const int64_t bytes = samples * s[0] * s[1] * s[2];
    out << "cache: "
        << (loaded.cached ? fixed(double(bytes) / (1024.0 * 1024.0), 1) + " MiB of decoded images in memory"
                          : std::string("none: images are decoded every epoch"))
        << "\n";
  }
  for (const auto& note : loaded.notes) out << note << "\n";
  out << "augmentation: " << augmentation_text(e) << "\n";
}

data::Image augmented_sample_grid(const Experiment& e, const data::Dataset& train, int count, int columns) {
  count = int(std::min<int64_t>(count, train.size()));
  columns = std::max(1, std::min(columns, count));
  data::BatchLoader loader(train, count, /*shuffle=*/true, data::augment_options(e.data.augment), LoaderConfig{}, at::kCPU,
                           static_cast<uint64_t>(e.experiment.seed));
  loader.start_epoch(0);
  const data::Batch batch = *loader.next();
  // Back to bytes: x * std + mean on the [0, 1] scale (synthetic floats: min-max per image).
  const int64_t c = train.sample_shape[0], h = train.sample_shape[1], w = train.sample_shape[2];
  at::Tensor pixels = batch.inputs.clone();
  if (train.bytes()) {
    for (int64_t ch = 0; ch < c; ++ch)
      pixels.select(1, ch).mul_(train.normalization.std.at(size_t(ch))).add_(train.normalization.mean.at(size_t(ch)));
  } else {
    const at::Tensor flat = pixels.flatten(1);
    const at::Tensor lo = std::get<0>(flat.min(1)).view({-1, 1, 1, 1}), hi = std::get<0>(flat.max(1)).view({-1, 1, 1, 1});
    pixels = (pixels - lo) / (hi - lo).clamp_min(1e-6);
  }
  const at::Tensor bytes = pixels.mul(255).round().clamp(0, 255).to(at::kByte).contiguous();

  const int scale = int(std::max<int64_t>(1, 64 / std::max(h, w)));
  const int cell_w = int(w) * scale, cell_h = int(h) * scale, label_h = kGlyphHeight + 4, pad = 4;
  const int rows = (count + columns - 1) / columns;
  data::Image grid{columns * (cell_w + pad) + pad, rows * (cell_h + label_h + pad) + pad, 3, {}};
  grid.pixels.assign(size_t(grid.width) * size_t(grid.height) * 3, 255);
  const auto* src = bytes.data_ptr<uint8_t>();
  for (int i = 0; i < count; ++i) {
    const int x0 = pad + (i % columns) * (cell_w + pad), y0 = pad + (i / columns) * (cell_h + label_h + pad);
    for (int y = 0; y < cell_h; ++y)
      for (int x = 0; x < cell_w; ++x)
        for (int ch = 0; ch < 3; ++ch) {
          const int64_t from = std::min<int64_t>(ch, c - 1);  // grey images: every channel the same
          grid.pixels[(size_t(y0 + y) * size_t(grid.width) + size_t(x0 + x)) * 3 + size_t(ch)] =
              src[((int64_t(i) * c + from) * h + y / scale) * w + x / scale];
        }
    std::string label = target_text(train, batch.targets[i]);
    label = label.substr(0, size_t(std::max(1, cell_w / kGlyphWidth)));
    draw_text(grid, x0, y0 + cell_h + 2, label, 0, 0, 0);
  }
  return grid;
}

}  // namespace plugtrain
