// Per-sample image augmentation, run on the loader threads before normalisation.
//
// The operations follow torchvision.transforms v1 on tensors: RandomCrop(padding,
// padding_mode), RandomHorizontalFlip(p), RandomResizedCrop(scale, ratio; bilinear),
// RandomRotation(degrees; bilinear here, fill 0), RandomAffine(translate) as whole-pixel
// shifts, ColorJitter(brightness, contrast, saturation; the three in a random order) and
// RandomErasing(p, scale, ratio). They run in the order the experiment lists them, on one
// C,H,W float image with pixel values in [0, 1] (or on already normalised float data, for
// the synthetic set). Plain loops over small images: no tensor dispatch per sample.
//
// Random numbers come only from the SampleRng passed in, in a fixed order per operation, so
// the same seed gives the same image (see sample_rng.h for how loaders seed it).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "config/choices.h"  // Augmentation, PaddingMode
#include "data/sample_rng.h"

namespace plugtrain::data {


// Every augmentation's parameters; only those named in `order` are used.
struct AugmentOptions {
  std::vector<Augmentation> order;  // applied in this order

  int64_t crop_padding = 4;  // random_crop: pixels added on each side before cropping
  PaddingMode crop_padding_mode = PaddingMode::constant;  // constant pads with 0 (black)
  double flip_p = 0.5;                                    // horizontal_flip
  std::array<double, 2> resized_crop_scale{0.08, 1.0};    // random_resized_crop: area fraction
  std::array<double, 2> resized_crop_ratio{3.0 / 4.0, 4.0 / 3.0};  // and aspect ratio range
  double rotation_degrees = 15;                           // rotation: angle in [-d, d]
  std::array<double, 2> translate{0.1, 0.1};              // translate: max shift, fraction of W, H
  double brightness = 0.4, contrast = 0.4, saturation = 0.4;  // color_jitter factors' spread
  double erasing_p = 0.5;                                 // random_erasing
  std::array<double, 2> erasing_scale{0.02, 0.33};
  std::array<double, 2> erasing_ratio{0.3, 3.3};
};

// For augmentations that only move pixels (random_crop, horizontal_flip; another throws
// DataError): where each output row and column of one
// height x width sample comes from (-1: padding, a 0 pixel), drawing from `rng` exactly as
// Augmenter::apply does, so pixel (y, x) of the augmented sample is source (rows[y], cols[x]).
void pixel_source_maps(const AugmentOptions& o, SampleRng& rng, int64_t height, int64_t width, int64_t* rows,
                       int64_t* cols);

// One C,H,W float image.
struct ImageView {
  float* pixels;
  int64_t channels, height, width;
};

class Augmenter {
 public:
  // Throws DataError naming an unknown augmentation or a parameter out of range.
  explicit Augmenter(AugmentOptions options);

  bool empty() const { return steps_.empty(); }
  const AugmentOptions& options() const { return options_; }

  // Augments `image` in place. `fill` (one value per channel, in the image's units) is what
  // random_erasing writes: pass the data set's mean, so an erased patch is 0 after
  // normalisation, as torchvision's RandomErasing after Normalize gives. `scratch` is any
  // buffer the caller keeps per thread (resized here as needed).
  void apply(ImageView image, SampleRng& rng, const std::vector<float>& fill, std::vector<float>& scratch) const;

 private:
  AugmentOptions options_;
  std::vector<Augmentation> steps_;
};

}  // namespace plugtrain::data
