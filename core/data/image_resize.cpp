// The resampling half of image_codec.h: Pillow's antialiased bilinear resize (fixed point, two
// separable passes over precomputed taps) and the centre crop, bit for bit as torchvision's
// PIL transforms give them.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "data/image_codec.h"

namespace plugtrain::data {
namespace {


// PIL's fixed point: 32 bits less 8 for the pixel and 2 of headroom.
constexpr int kPrecisionBits = 32 - 8 - 2;

// For output positions [first, first + count) of an in_size -> out_size resize: where each
// one's taps start in the source, how many there are, and their weights (ksize per output).
struct Taps {
  int ksize = 0;
  std::vector<int> start, length;
  std::vector<int32_t> weights;
};

// PIL's precompute_coeffs + normalize_coeffs_8bpc with the bilinear (triangle) filter.
Taps bilinear_taps(int in_size, int out_size, int first, int count) {
  const double scale = double(in_size) / double(out_size);
  const double filterscale = std::max(scale, 1.0);
  const double support = 1.0 * filterscale;
  Taps taps;
  taps.ksize = int(std::ceil(support)) * 2 + 1;
  taps.start.resize(size_t(count));
  taps.length.resize(size_t(count));
  taps.weights.assign(size_t(count) * size_t(taps.ksize), 0);
  std::vector<double> k(size_t(taps.ksize));
  for (int i = 0; i < count; ++i) {
    const double center = (first + i + 0.5) * scale;
    const double ss = 1.0 / filterscale;
    int xmin = int(center - support + 0.5);  // truncation toward zero, as PIL's (int) cast
    if (xmin < 0) xmin = 0;
    int xmax = int(center + support + 0.5);
    if (xmax > in_size) xmax = in_size;
    xmax -= xmin;
    double ww = 0.0;
    for (int x = 0; x < xmax; ++x) {
      double t = std::abs((x + xmin - center + 0.5) * ss);
      const double w = t < 1.0 ? 1.0 - t : 0.0;
      k[size_t(x)] = w;
      ww += w;
    }
    int32_t* out = &taps.weights[size_t(i) * size_t(taps.ksize)];
    for (int x = 0; x < xmax; ++x) {
      const double w = ww != 0.0 ? k[size_t(x)] / ww : k[size_t(x)];
      out[x] = int32_t(w < 0 ? -0.5 + w * (1 << kPrecisionBits) : 0.5 + w * (1 << kPrecisionBits));
    }
    taps.start[size_t(i)] = xmin;
    taps.length[size_t(i)] = xmax;
  }
  return taps;
}

inline uint8_t clip8(int32_t v) {
  if (v >= (1 << kPrecisionBits << 8)) return 255;
  if (v <= 0) return 0;
  return uint8_t(v >> kPrecisionBits);
}

// A block of 8-bit pixel rows: `rows` rows starting at data, `stride` bytes apart.
struct Rows {
  const uint8_t* data;
  size_t stride;
  int rows;
};

// Horizontal pass: each row of `in` resampled by taps (whose source positions are offset
// by `first_column` from in's first column) into out, rows of taps.start.size() pixels.
template <int C>
void horizontal_pass(Rows in, int channels, const Taps& taps, int first_column, uint8_t* out) {
  const int ch = C > 0 ? C : channels;
  const size_t out_w = taps.start.size();
  for (int y = 0; y < in.rows; ++y) {
    const uint8_t* row = in.data + size_t(y) * in.stride;
    uint8_t* o = out + size_t(y) * out_w * size_t(ch);
    for (size_t x = 0; x < out_w; ++x) {
      const int32_t* k = &taps.weights[x * size_t(taps.ksize)];
      const uint8_t* p = row + size_t(taps.start[x] - first_column) * size_t(ch);
      const int n = taps.length[x];
      for (int c = 0; c < ch; ++c) {
        int32_t acc = 1 << (kPrecisionBits - 1);
        for (int t = 0; t < n; ++t) acc += int32_t(p[t * ch + c]) * k[t];
        o[x * size_t(ch) + size_t(c)] = clip8(acc);
      }
    }
  }
}

void horizontal_pass(Rows in, int channels, const Taps& taps, int first_column, uint8_t* out) {
  switch (channels) {
    case 1: return horizontal_pass<1>(in, 1, taps, first_column, out);
    case 3: return horizontal_pass<3>(in, 3, taps, first_column, out);
    case 4: return horizontal_pass<4>(in, 4, taps, first_column, out);
    default: return horizontal_pass<0>(in, channels, taps, first_column, out);
  }
}

// Vertical pass: output row i is the taps' weighted sum of rows taps.start[i] - first_row
// of `in`, each row_bytes wide; a whole row at a time (sequential reads, vectorisable).
void vertical_pass(Rows in, size_t row_bytes, const Taps& taps, int first_row, uint8_t* out) {
  std::vector<int32_t> acc(row_bytes);
  for (size_t y = 0; y < taps.start.size(); ++y) {
    std::fill(acc.begin(), acc.end(), int32_t(1) << (kPrecisionBits - 1));
    const int32_t* k = &taps.weights[y * size_t(taps.ksize)];
    for (int t = 0; t < taps.length[y]; ++t) {
      const uint8_t* row = in.data + size_t(taps.start[y] - first_row + t) * in.stride;
      const int32_t w = k[t];
      for (size_t i = 0; i < row_bytes; ++i) acc[i] += int32_t(row[i]) * w;
    }
    uint8_t* o = out + y * row_bytes;
    for (size_t i = 0; i < row_bytes; ++i) o[i] = clip8(acc[i]);
  }
}

// The source range [first, end) a pass's taps read.
std::pair<int, int> tap_range(const Taps& taps) {
  int first = taps.start.front(), end = first;
  for (size_t i = 0; i < taps.start.size(); ++i) {
    first = std::min(first, taps.start[i]);
    end = std::max(end, taps.start[i] + taps.length[i]);
  }
  return {first, end};
}

// Resamples src to the window [x0, x0 + width) x [y0, y0 + height) of its resize to
// full_width x full_height: every output pixel depends only on its own position, so this
// is the full resize cropped, bit for bit. Each pass reads only the source rows or columns
// the window needs. The pass order is Pillow's (13; it decides on the full sizes): the
// vertical pass first when it removes more than twice as many rows as the horizontal pass
// removes columns, else horizontal first. Each pass rounds to 8 bits, so the order shows
// in the last bit.
Image resample_window(const Image& src, int full_width, int full_height, int x0, int y0, int width, int height) {
  const int ch = src.channels;
  const size_t px = size_t(ch);
  const size_t src_stride = size_t(src.width) * px;
  const bool need_horizontal = full_width != src.width;
  const bool need_vertical = full_height != src.height;
  Image out;
  out.width = width;
  out.height = height;
  out.channels = ch;
  out.pixels.resize(size_t(width) * size_t(height) * px);
  const size_t out_row_bytes = size_t(width) * px;

  if (!need_horizontal && !need_vertical) {  // a plain crop
    for (int y = 0; y < height; ++y)
      std::memcpy(&out.pixels[size_t(y) * out_row_bytes], &src.pixels[size_t(y0 + y) * src_stride + size_t(x0) * px],
                  out_row_bytes);
    return out;
  }
  if (!need_vertical) {
    const Taps h = bilinear_taps(src.width, full_width, x0, width);
    horizontal_pass(Rows{src.pixels.data() + size_t(y0) * src_stride, src_stride, height}, ch, h, 0,
                    out.pixels.data());
    return out;
  }
  const Taps v = bilinear_taps(src.height, full_height, y0, height);
  if (!need_horizontal) {
    vertical_pass(Rows{src.pixels.data() + size_t(x0) * px, src_stride, src.height}, out_row_bytes, v, 0,
                  out.pixels.data());
    return out;
  }
  const Taps h = bilinear_taps(src.width, full_width, x0, width);
  const bool vertical_first =
      src.height > full_height && int64_t(src.height) - full_height > 2 * (int64_t(src.width) - full_width);
  std::vector<uint8_t> mid;
  if (vertical_first) {
    const auto [c0, c1] = tap_range(h);  // the source columns the horizontal pass reads
    const size_t mid_row_bytes = size_t(c1 - c0) * px;
    mid.resize(mid_row_bytes * size_t(height));
    vertical_pass(Rows{src.pixels.data() + size_t(c0) * px, src_stride, src.height}, mid_row_bytes, v, 0, mid.data());
    horizontal_pass(Rows{mid.data(), mid_row_bytes, height}, ch, h, c0, out.pixels.data());
  } else {
    const auto [r0, r1] = tap_range(v);  // the source rows the vertical pass reads
    mid.resize(out_row_bytes * size_t(r1 - r0));
    horizontal_pass(Rows{src.pixels.data() + size_t(r0) * src_stride, src_stride, r1 - r0}, ch, h, 0, mid.data());
    vertical_pass(Rows{mid.data(), out_row_bytes, r1 - r0}, out_row_bytes, v, r0, out.pixels.data());
  }
  return out;
}

void check_source(const Image& src, const char* what) {
  if (src.width < 1 || src.height < 1 || src.channels < 1 ||
      src.pixels.size() != size_t(src.width) * size_t(src.height) * size_t(src.channels))
    throw std::invalid_argument(std::string(what) + ": the source image is empty or its pixels do not match " +
                                image_size_text(src.width, src.height) + "x" + std::to_string(src.channels));
}

}  // namespace

Image resize_bilinear(const Image& src, int width, int height) {
  check_source(src, "resize_bilinear");
  if (width < 1 || height < 1)
    throw std::invalid_argument("resize_bilinear: target size " + image_size_text(width, height) + " is not positive");
  if (width == src.width && height == src.height) return src;
  return resample_window(src, width, height, 0, 0, width, height);
}

Image center_crop(const Image& src, int width, int height) {
  check_source(src, "center_crop");
  if (width < 1 || height < 1 || width > src.width || height > src.height)
    throw std::invalid_argument("center_crop: " + image_size_text(width, height) + " does not fit in the " +
                                image_size_text(src.width, src.height) + " image");
  const int x0 = (src.width - width) / 2, y0 = (src.height - height) / 2;
  Image out;
  out.width = width;
  out.height = height;
  out.channels = src.channels;
  const size_t row_bytes = size_t(width) * size_t(src.channels);
  out.pixels.resize(row_bytes * size_t(height));
  for (int y = 0; y < height; ++y)
    std::memcpy(&out.pixels[size_t(y) * row_bytes],
                &src.pixels[(size_t(y0 + y) * size_t(src.width) + size_t(x0)) * size_t(src.channels)], row_bytes);
  return out;
}

Image resize_shorter_then_center_crop(const Image& src, int size) {
  check_source(src, "resize_shorter_then_center_crop");
  if (size < 1) throw std::invalid_argument("resize_shorter_then_center_crop: size " + std::to_string(size) + " is not positive");
  const int64_t longer = src.width <= src.height ? int64_t(size) * src.height / src.width
                                                 : int64_t(size) * src.width / src.height;
  if (longer > std::numeric_limits<int>::max())
    throw std::invalid_argument("resize_shorter_then_center_crop: the " + image_size_text(src.width, src.height) +
                                " image resized to " + std::to_string(size) + " on its shorter side is too long");
  const int full_width = src.width <= src.height ? size : int(longer);
  const int full_height = src.width <= src.height ? int(longer) : size;
  const int x0 = (full_width - size) / 2, y0 = (full_height - size) / 2;
  return resample_window(src, full_width, full_height, x0, y0, size, size);
}

}  // namespace plugtrain::data
