#include "data/augment.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "data/data_error.h"

namespace plugtrain::data {
namespace {

constexpr double kPi = 3.14159265358979323846;

std::string range_text(const std::array<double, 2>& r) {
  return "[" + std::to_string(r[0]) + ", " + std::to_string(r[1]) + "]";
}

void require(bool ok, const std::string& what) {
  if (!ok) throw DataError("augmentation: " + what);
}

// Source index for a destination index outside [0, n) under a padding mode; -1: fill.
int64_t padded_index(int64_t i, int64_t n, PaddingMode mode) {
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case PaddingMode::constant: return -1;
    case PaddingMode::edge: return std::clamp<int64_t>(i, 0, n - 1);
    case PaddingMode::reflect:
      if (n == 1) return 0;
      // Mirror without repeating the edge (numpy/torch "reflect"), folding until inside.
      while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
      return i;
  }
  return -1;
}

// Bilinear sample of channel plane `p` (h x w) at (y, x) in pixel-centre coordinates;
// corners outside the image contribute `fill`.
float bilinear(const float* p, int64_t h, int64_t w, double y, double x, float fill) {
  const double y0f = std::floor(y), x0f = std::floor(x);
  const auto y0 = static_cast<int64_t>(y0f), x0 = static_cast<int64_t>(x0f);
  const double fy = y - y0f, fx = x - x0f;
  auto at = [&](int64_t yy, int64_t xx) -> double {
    return (yy < 0 || yy >= h || xx < 0 || xx >= w) ? fill : p[yy * w + xx];
  };
  const double top = at(y0, x0) * (1 - fx) + at(y0, x0 + 1) * fx;
  const double bottom = at(y0 + 1, x0) * (1 - fx) + at(y0 + 1, x0 + 1) * fx;
  return static_cast<float>(top * (1 - fy) + bottom * fy);
}

void random_crop(ImageView im, const AugmentOptions& o, SampleRng& rng, std::vector<float>& scratch) {
  const int64_t p = o.crop_padding;
  const int64_t dy = rng.below(2 * p + 1) - p, dx = rng.below(2 * p + 1) - p;
  if (dy == 0 && dx == 0) return;
  const int64_t plane = im.height * im.width;
  scratch.assign(im.pixels, im.pixels + im.channels * plane);
  for (int64_t c = 0; c < im.channels; ++c) {
    const float* src = scratch.data() + c * plane;
    float* dst = im.pixels + c * plane;
    for (int64_t y = 0; y < im.height; ++y) {
      const int64_t sy = padded_index(y + dy, im.height, o.crop_padding_mode);
      for (int64_t x = 0; x < im.width; ++x) {
        const int64_t sx = padded_index(x + dx, im.width, o.crop_padding_mode);
        dst[y * im.width + x] = (sy < 0 || sx < 0) ? 0.0f : src[sy * im.width + sx];
      }
    }
  }
}

void horizontal_flip(ImageView im, const AugmentOptions& o, SampleRng& rng) {
  if (!rng.chance(o.flip_p)) return;
  for (int64_t row = 0; row < im.channels * im.height; ++row) {
    float* r = im.pixels + row * im.width;
    std::reverse(r, r + im.width);
  }
}

// torchvision's RandomResizedCrop.get_params: ten tries at a random area and aspect ratio,
// then the whole image clipped to the ratio range, centred.
void random_resized_crop(ImageView im, const AugmentOptions& o, SampleRng& rng, std::vector<float>& scratch) {
  const int64_t H = im.height, W = im.width;
  const double area = double(H * W);
  const double log_lo = std::log(o.resized_crop_ratio[0]), log_hi = std::log(o.resized_crop_ratio[1]);
  int64_t top = 0, left = 0, h = H, w = W;
  bool found = false;
  for (int attempt = 0; attempt < 10 && !found; ++attempt) {
    const double target = area * rng.uniform(o.resized_crop_scale[0], o.resized_crop_scale[1]);
    const double aspect = std::exp(rng.uniform(log_lo, log_hi));
    const auto cw = static_cast<int64_t>(std::llround(std::sqrt(target * aspect)));
    const auto ch = static_cast<int64_t>(std::llround(std::sqrt(target / aspect)));
    if (cw > 0 && cw <= W && ch > 0 && ch <= H) {
      top = rng.below(H - ch + 1);
      left = rng.below(W - cw + 1);
      h = ch;
      w = cw;
      found = true;
    }
  }
  if (!found) {
    const double in_ratio = double(W) / double(H);
    if (in_ratio < o.resized_crop_ratio[0]) {
      w = W;
      h = static_cast<int64_t>(std::llround(double(w) / o.resized_crop_ratio[0]));
    } else if (in_ratio > o.resized_crop_ratio[1]) {
      h = H;
      w = static_cast<int64_t>(std::llround(double(h) * o.resized_crop_ratio[1]));
    }
    h = std::clamp<int64_t>(h, 1, H);
    w = std::clamp<int64_t>(w, 1, W);
    top = (H - h) / 2;
    left = (W - w) / 2;
  }
  if (h == H && w == W) return;
  // The crop is never larger than the output, so plain bilinear (half-pixel centres,
  // clamped to the crop) is what an antialiased resize does here too.
  const int64_t plane = H * W;
  scratch.assign(im.pixels, im.pixels + im.channels * plane);
  const double sy = double(h) / double(H), sx = double(w) / double(W);
  for (int64_t c = 0; c < im.channels; ++c) {
    const float* src = scratch.data() + c * plane;
    float* dst = im.pixels + c * plane;
    for (int64_t y = 0; y < H; ++y) {
      const double fy = std::clamp((y + 0.5) * sy - 0.5, 0.0, double(h - 1)) + double(top);
      for (int64_t x = 0; x < W; ++x) {
        const double fx = std::clamp((x + 0.5) * sx - 0.5, 0.0, double(w - 1)) + double(left);
        dst[y * W + x] = bilinear(src, H, W, fy, fx, 0.0f);
      }
    }
  }
}

// Counter-clockwise by an angle in [-d, d] about the image centre, bilinear, fill 0.
void rotation(ImageView im, const AugmentOptions& o, SampleRng& rng, std::vector<float>& scratch) {
  const double angle = rng.uniform(-o.rotation_degrees, o.rotation_degrees) * kPi / 180.0;
  if (angle == 0.0) return;
  const double cs = std::cos(angle), sn = std::sin(angle);
  const int64_t H = im.height, W = im.width, plane = H * W;
  const double cy = 0.5 * double(H) - 0.5, cx = 0.5 * double(W) - 0.5;
  scratch.assign(im.pixels, im.pixels + im.channels * plane);
  for (int64_t c = 0; c < im.channels; ++c) {
    const float* src = scratch.data() + c * plane;
    float* dst = im.pixels + c * plane;
    for (int64_t y = 0; y < H; ++y) {
      for (int64_t x = 0; x < W; ++x) {
        // Inverse map: rotate the output point back by -angle (y grows downwards).
        const double ox = double(x) - cx, oy = double(y) - cy;
        const double source_x = cs * ox - sn * oy + cx, source_y = sn * ox + cs * oy + cy;
        dst[y * W + x] = bilinear(src, H, W, source_y, source_x, 0.0f);
      }
    }
  }
}

// A whole-pixel shift of up to translate[0] x W and translate[1] x H, fill 0.
void translate(ImageView im, const AugmentOptions& o, SampleRng& rng, std::vector<float>& scratch) {
  const double max_x = o.translate[0] * double(im.width), max_y = o.translate[1] * double(im.height);
  const auto tx = static_cast<int64_t>(std::llround(rng.uniform(-max_x, max_x)));
  const auto ty = static_cast<int64_t>(std::llround(rng.uniform(-max_y, max_y)));
  if (tx == 0 && ty == 0) return;
  const int64_t H = im.height, W = im.width, plane = H * W;
  scratch.assign(im.pixels, im.pixels + im.channels * plane);
  for (int64_t c = 0; c < im.channels; ++c) {
    const float* src = scratch.data() + c * plane;
    float* dst = im.pixels + c * plane;
    for (int64_t y = 0; y < H; ++y) {
      const int64_t sy = y - ty;
      for (int64_t x = 0; x < W; ++x) {
        const int64_t sx = x - tx;
        dst[y * W + x] = (sy < 0 || sy >= H || sx < 0 || sx >= W) ? 0.0f : src[sy * W + sx];
      }
    }
  }
}

// ITU-R 601 luma, as torchvision's rgb_to_grayscale.
float gray(const float* p, int64_t plane, int64_t i, int64_t channels) {
  if (channels < 3) return p[i];
  return 0.299f * p[i] + 0.587f * p[plane + i] + 0.114f * p[2 * plane + i];
}

float clamp01(float v) { return std::min(1.0f, std::max(0.0f, v)); }

// torchvision's ColorJitter on [0, 1] images: each factor uniform in [max(0, 1 - s), 1 + s],
// the three adjustments in a random order, each result clamped to [0, 1].
void color_jitter(ImageView im, const AugmentOptions& o, SampleRng& rng) {
  const int64_t plane = im.height * im.width, n = im.channels * plane;
  float* p = im.pixels;
  std::array<int, 3> order{0, 1, 2};
  for (int i = 2; i > 0; --i) std::swap(order[i], order[rng.below(i + 1)]);
  auto factor = [&](double spread) { return spread > 0 ? rng.uniform(std::max(0.0, 1 - spread), 1 + spread) : 1.0; };
  const double fb = factor(o.brightness), fc = factor(o.contrast), fs = factor(o.saturation);
  for (int step : order) {
    if (step == 0 && fb != 1.0) {
      for (int64_t i = 0; i < n; ++i) p[i] = clamp01(float(p[i] * fb));
    } else if (step == 1 && fc != 1.0) {
      double sum = 0;
      for (int64_t i = 0; i < plane; ++i) sum += gray(p, plane, i, im.channels);
      const float mean = float(sum / double(plane)), f = float(fc);
      for (int64_t i = 0; i < n; ++i) p[i] = clamp01(f * p[i] + (1 - f) * mean);
    } else if (step == 2 && fs != 1.0 && im.channels >= 3) {
      const float f = float(fs);
      for (int64_t i = 0; i < plane; ++i) {
        const float g = gray(p, plane, i, im.channels);
        for (int64_t c = 0; c < 3; ++c) p[c * plane + i] = clamp01(f * p[c * plane + i] + (1 - f) * g);
      }
    }
  }
}

// torchvision's RandomErasing.get_params: with probability p, ten tries at a rectangle of a
// random area fraction and aspect ratio that fits; filled with `fill`.
void random_erasing(ImageView im, const AugmentOptions& o, SampleRng& rng, const std::vector<float>& fill) {
  if (!rng.chance(o.erasing_p)) return;
  const int64_t H = im.height, W = im.width;
  const double area = double(H * W);
  const double log_lo = std::log(o.erasing_ratio[0]), log_hi = std::log(o.erasing_ratio[1]);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target = area * rng.uniform(o.erasing_scale[0], o.erasing_scale[1]);
    const double aspect = std::exp(rng.uniform(log_lo, log_hi));
    const auto h = static_cast<int64_t>(std::llround(std::sqrt(target * aspect)));
    const auto w = static_cast<int64_t>(std::llround(std::sqrt(target / aspect)));
    if (!(h < H && w < W) || h == 0 || w == 0) continue;
    const int64_t top = rng.below(H - h + 1), left = rng.below(W - w + 1);
    for (int64_t c = 0; c < im.channels; ++c) {
      const float v = c < int64_t(fill.size()) ? fill[size_t(c)] : 0.0f;
      for (int64_t y = top; y < top + h; ++y) std::fill_n(im.pixels + (c * H + y) * W + left, w, v);
    }
    return;
  }
}

}  // namespace

Augmenter::Augmenter(AugmentOptions options) : options_(std::move(options)) {
  const AugmentOptions& o = options_;
  steps_ = o.order;
  require(o.crop_padding >= 0, "crop_padding must be >= 0");
  require(o.flip_p >= 0 && o.flip_p <= 1, "flip_p must be in [0, 1]");
  require(o.resized_crop_scale[0] > 0 && o.resized_crop_scale[0] <= o.resized_crop_scale[1] &&
              o.resized_crop_scale[1] <= 1,
          "resized_crop_scale must be 0 < lo <= hi <= 1 (got " + range_text(o.resized_crop_scale) + ")");
  require(o.resized_crop_ratio[0] > 0 && o.resized_crop_ratio[0] <= o.resized_crop_ratio[1],
          "resized_crop_ratio must be 0 < lo <= hi (got " + range_text(o.resized_crop_ratio) + ")");
  require(o.rotation_degrees >= 0 && o.rotation_degrees <= 180, "rotation_degrees must be in [0, 180]");
  require(o.translate[0] >= 0 && o.translate[0] <= 1 && o.translate[1] >= 0 && o.translate[1] <= 1,
          "translate must be two fractions in [0, 1] (got " + range_text(o.translate) + ")");
  require(o.brightness >= 0 && o.contrast >= 0 && o.saturation >= 0, "color_jitter factors must be >= 0");
  require(o.erasing_p >= 0 && o.erasing_p <= 1, "erasing_p must be in [0, 1]");
  require(o.erasing_scale[0] > 0 && o.erasing_scale[0] <= o.erasing_scale[1] && o.erasing_scale[1] < 1,
          "erasing_scale must be 0 < lo <= hi < 1 (got " + range_text(o.erasing_scale) + ")");
  require(o.erasing_ratio[0] > 0 && o.erasing_ratio[0] <= o.erasing_ratio[1],
          "erasing_ratio must be 0 < lo <= hi (got " + range_text(o.erasing_ratio) + ")");
}

void pixel_source_maps(const AugmentOptions& o, SampleRng& rng, int64_t height, int64_t width, int64_t* rows,
                       int64_t* cols) {
  std::vector<int64_t> before;
  for (int64_t y = 0; y < height; ++y) rows[y] = y;
  for (int64_t x = 0; x < width; ++x) cols[x] = x;
  // The new map reads the old one where the operation reads the image (a padding pixel stays 0).
  auto move = [&](int64_t* map, int64_t n, auto source_of) {
    before.assign(map, map + n);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t s = source_of(i);
      map[i] = s < 0 ? -1 : before[size_t(s)];
    }
  };
  for (const Augmentation step : o.order) {
    if (step == Augmentation::random_crop) {  // the draws of random_crop()
      const int64_t p = o.crop_padding;
      const int64_t dy = rng.below(2 * p + 1) - p, dx = rng.below(2 * p + 1) - p;
      move(rows, height, [&](int64_t y) { return padded_index(y + dy, height, o.crop_padding_mode); });
      move(cols, width, [&](int64_t x) { return padded_index(x + dx, width, o.crop_padding_mode); });
    } else if (step == Augmentation::horizontal_flip) {  // and of horizontal_flip()
      if (rng.chance(o.flip_p)) move(cols, width, [&](int64_t x) { return width - 1 - x; });
    } else {
      throw DataError(std::string("augmentation ") + word_of(step) + " does not only move pixels");
    }
  }
}

void Augmenter::apply(ImageView image, SampleRng& rng, const std::vector<float>& fill,
                      std::vector<float>& scratch) const {
  for (Augmentation step : steps_) {
    switch (step) {
      case Augmentation::random_crop: random_crop(image, options_, rng, scratch); break;
      case Augmentation::horizontal_flip: horizontal_flip(image, options_, rng); break;
      case Augmentation::random_resized_crop: random_resized_crop(image, options_, rng, scratch); break;
      case Augmentation::rotation: rotation(image, options_, rng, scratch); break;
      case Augmentation::translate: translate(image, options_, rng, scratch); break;
      case Augmentation::color_jitter: color_jitter(image, options_, rng); break;
      case Augmentation::random_erasing: random_erasing(image, options_, rng, fill); break;
    }
  }
}

}  // namespace plugtrain::data
