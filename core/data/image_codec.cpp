#include "data/image_codec.h"

#include <spng.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "data/data_error.h"
#include "util/atomic_file.h"

namespace plugtrain::data {
namespace {

// libspng's caps for one ancillary chunk kept in memory and for all of them together
// (text, ICC profile, unknown chunks; pixel data is streamed and not counted). Exceeding
// either is reported as an out-of-memory error.
constexpr size_t kPngChunkLimit = size_t(16) << 20;
constexpr size_t kPngChunkCacheLimit = size_t(64) << 20;

// The library's message made one line: newlines become spaces, trailing blanks go.
std::string one_line(const char* message) {
  std::string s = message ? message : "unknown error";
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::string size_text(int64_t width, int64_t height) {
  return std::to_string(width) + "x" + std::to_string(height);
}

// The size limits, checked before any pixel buffer is allocated.
void check_dimensions(const std::string& name, const char* format, int64_t width, int64_t height) {
  if (width < 1 || height < 1)
    throw DataError(name + ": cannot decode " + format + ": no image size in the header (" +
                    size_text(width, height) + ")");
  if (width > kMaxImageSide || height > kMaxImageSide || width * height > kMaxImagePixels)
    throw DataError(name + ": " + format + " image of " + size_text(width, height) +
                    " pixels is larger than the decoder accepts (" + std::to_string(kMaxImageSide) +
                    " per side, " + std::to_string(kMaxImagePixels >> 20) + " Mi pixels)");
}

// ---- JPEG -------------------------------------------------------------------------------

// A fresh TurboJPEG decompressor per image (creating one costs about 0.2 us, against some
// 20 us to decode even a 64x64 JPEG). Reusing one across images would carry state over:
// libjpeg keeps the quantisation and Huffman tables a file defined for the next one (an
// abbreviated file lacking its own tables would decode or not depending on the file before
// it on that thread), and TurboJPEG 2.1's tjDecompressHeader3 returns from an error without
// resetting the decompressor, so the next header read would resume the broken parse.
struct Decompressor {
  tjhandle handle = tjInitDecompress();
  Decompressor() = default;
  Decompressor(const Decompressor&) = delete;
  Decompressor& operator=(const Decompressor&) = delete;
  ~Decompressor() {
    if (handle) tjDestroy(handle);
  }
};

// The smallest scaling factor (at most 1/1) whose shorter side is still >= min_side.
tjscalingfactor jpeg_scale_for(int width, int height, int min_side) {
  tjscalingfactor best{1, 1};
  if (min_side <= 0 || std::min(width, height) <= min_side) return best;
  int count = 0;
  const tjscalingfactor* factors = tjGetScalingFactors(&count);
  for (int i = 0; factors && i < count; ++i) {
    const tjscalingfactor f = factors[i];
    if (int64_t(f.num) > int64_t(f.denom)) continue;  // upscaling factors
    if (std::min(TJSCALED(width, f), TJSCALED(height, f)) < min_side) continue;
    if (int64_t(f.num) * best.denom < int64_t(best.num) * f.denom) best = f;
  }
  return best;
}

// Adobe CMYK (inverted: 255 = no ink) to RGB, libjpeg-turbo's cmyk_to_rgb: R = C*K/255
// rounded. c*k/255 is never exactly halfway (255 is odd), so +127 rounds to nearest.
void cmyk_to_rgb(const uint8_t* cmyk, uint8_t* rgb, size_t pixels) {
  for (size_t i = 0; i < pixels; ++i, cmyk += 4, rgb += 3) {
    const unsigned k = cmyk[3];
    rgb[0] = uint8_t((cmyk[0] * k + 127) / 255);
    rgb[1] = uint8_t((cmyk[1] * k + 127) / 255);
    rgb[2] = uint8_t((cmyk[2] * k + 127) / 255);
  }
}

Image decode_jpeg(const uint8_t* bytes, size_t size, const std::string& name, int min_side_hint) {
  const Decompressor decompressor;
  tjhandle tj = decompressor.handle;
  if (!tj) throw DataError(name + ": cannot decode JPEG: " + one_line(tjGetErrorStr2(nullptr)));
  auto fail = [&]() -> DataError {
    return DataError(name + ": cannot decode JPEG: " + one_line(tjGetErrorStr2(tj)));
  };
  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  // A warning while reading the header (corrupt marker data) fails here as well: -1 either way.
  if (tjDecompressHeader3(tj, bytes, static_cast<unsigned long>(size), &width, &height, &subsampling,
                          &colorspace) != 0)
    throw fail();
  check_dimensions(name, "JPEG", width, height);

  const tjscalingfactor scale = jpeg_scale_for(width, height, min_side_hint);
  Image image;
  image.width = TJSCALED(width, scale);
  image.height = TJSCALED(height, scale);
  image.channels = 3;
  const size_t pixels = size_t(image.width) * size_t(image.height);
  // Every warning is an error: stop at the first one rather than decode a damaged image.
  const int flags = TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS;
  const bool cmyk = colorspace == TJCS_CMYK || colorspace == TJCS_YCCK;
  if (!cmyk) {
    image.pixels.resize(pixels * 3);
    if (tjDecompress2(tj, bytes, static_cast<unsigned long>(size), image.pixels.data(), image.width, 0,
                      image.height, TJPF_RGB, flags) != 0)
      throw fail();
    return image;
  }
  std::vector<uint8_t> cmyk_pixels(pixels * 4);
  if (tjDecompress2(tj, bytes, static_cast<unsigned long>(size), cmyk_pixels.data(), image.width, 0,
                    image.height, TJPF_CMYK, flags) != 0)
    throw fail();
  image.pixels.resize(pixels * 3);
  cmyk_to_rgb(cmyk_pixels.data(), image.pixels.data(), pixels);
  return image;
}

// ---- PNG --------------------------------------------------------------------------------

struct SpngFree {
  void operator()(spng_ctx* ctx) const { spng_ctx_free(ctx); }
};
using SpngContext = std::unique_ptr<spng_ctx, SpngFree>;

Image decode_png(const uint8_t* bytes, size_t size, const std::string& name) {
  auto fail = [&](int rc) { return DataError(name + ": cannot decode PNG: " + one_line(spng_strerror(rc))); };
  SpngContext ctx(spng_ctx_new(0));
  if (!ctx) throw DataError(name + ": cannot decode PNG: out of memory");
  int rc = spng_set_image_limits(ctx.get(), kMaxImageSide, kMaxImageSide);
  if (rc == 0) rc = spng_set_chunk_limits(ctx.get(), kPngChunkLimit, kPngChunkCacheLimit);
  if (rc == 0) rc = spng_set_png_buffer(ctx.get(), bytes, size);
  if (rc != 0) throw fail(rc);
  spng_ihdr ihdr{};
  if ((rc = spng_get_ihdr(ctx.get(), &ihdr)) != 0) throw fail(rc);
  check_dimensions(name, "PNG", ihdr.width, ihdr.height);

  Image image;
  image.width = int(ihdr.width);
  image.height = int(ihdr.height);
  image.channels = 3;
  size_t decoded_size = 0;
  if ((rc = spng_decoded_image_size(ctx.get(), SPNG_FMT_RGB8, &decoded_size)) != 0) throw fail(rc);
  if (decoded_size != size_t(image.width) * size_t(image.height) * 3)
    throw DataError(name + ": cannot decode PNG: unexpected decoded size " + std::to_string(decoded_size));
  image.pixels.resize(decoded_size);
  // No flags: alpha and tRNS are dropped, gAMA is ignored, 16-bit samples keep the high byte.
  if ((rc = spng_decode_image(ctx.get(), image.pixels.data(), decoded_size, SPNG_FMT_RGB8, 0)) != 0)
    throw fail(rc);
  // spng_decode_image stops at the end of the pixel data's zlib stream; reading on to IEND
  // reports a file cut after it (or a bad last IDAT checksum) as truncated too.
  if ((rc = spng_decode_chunks(ctx.get())) != 0) throw fail(rc);
  return image;
}

std::vector<uint8_t> encode_png_named(const Image& image, const std::string& prefix) {
  auto fail = [&](const std::string& why) { return DataError(prefix + "cannot encode PNG: " + why); };
  if (image.channels != 1 && image.channels != 3)
    throw fail("an image of " + std::to_string(image.channels) + " channels (1 or 3 are written)");
  if (image.width < 1 || image.height < 1 || image.width > kMaxImageSide || image.height > kMaxImageSide)
    throw fail("an image of " + size_text(image.width, image.height) + " pixels");
  const size_t expected = size_t(image.width) * size_t(image.height) * size_t(image.channels);
  if (image.pixels.size() != expected)
    throw fail(std::to_string(image.pixels.size()) + " bytes of pixels for " +
               size_text(image.width, image.height) + "x" + std::to_string(image.channels));

  SpngContext ctx(spng_ctx_new(SPNG_CTX_ENCODER));
  if (!ctx) throw fail("out of memory");
  spng_ihdr ihdr{};
  ihdr.width = uint32_t(image.width);
  ihdr.height = uint32_t(image.height);
  ihdr.bit_depth = 8;
  ihdr.color_type = image.channels == 3 ? SPNG_COLOR_TYPE_TRUECOLOR : SPNG_COLOR_TYPE_GRAYSCALE;
  int rc = spng_set_option(ctx.get(), SPNG_ENCODE_TO_BUFFER, 1);
  if (rc == 0) rc = spng_set_ihdr(ctx.get(), &ihdr);
  if (rc == 0)
    rc = spng_encode_image(ctx.get(), image.pixels.data(), image.pixels.size(), SPNG_FMT_PNG,
                           SPNG_ENCODE_FINALIZE);
  if (rc != 0) throw fail(one_line(spng_strerror(rc)));
  size_t length = 0;
  int error = 0;
  std::unique_ptr<void, decltype(&std::free)> buffer(spng_get_png_buffer(ctx.get(), &length, &error), &std::free);
  if (!buffer || error != 0) throw fail(one_line(spng_strerror(error ? error : SPNG_EMEM)));
  const auto* data = static_cast<const uint8_t*>(buffer.get());
  return std::vector<uint8_t>(data, data + length);
}

// ---- resampling -------------------------------------------------------------------------

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
                                size_text(src.width, src.height) + "x" + std::to_string(src.channels));
}

}  // namespace

Image decode_image(const uint8_t* bytes, size_t size, const std::string& name_for_errors, int min_side_hint) {
  static const uint8_t kJpegMagic[3] = {0xFF, 0xD8, 0xFF};
  static const uint8_t kPngMagic[4] = {0x89, 'P', 'N', 'G'};
  if (bytes && size >= sizeof kJpegMagic && std::memcmp(bytes, kJpegMagic, sizeof kJpegMagic) == 0)
    return decode_jpeg(bytes, size, name_for_errors, min_side_hint);
  if (bytes && size >= sizeof kPngMagic && std::memcmp(bytes, kPngMagic, sizeof kPngMagic) == 0)
    return decode_png(bytes, size, name_for_errors);
  throw DataError(name_for_errors + ": not a JPEG or PNG image");
}

std::vector<uint8_t> encode_png(const Image& image) { return encode_png_named(image, ""); }

void write_png_file(const std::filesystem::path& path, const Image& image) {
  const std::vector<uint8_t> png = encode_png_named(image, path.string() + ": ");
  write_file_atomically(path, std::string(reinterpret_cast<const char*>(png.data()), png.size()));
}

Image resize_bilinear(const Image& src, int width, int height) {
  check_source(src, "resize_bilinear");
  if (width < 1 || height < 1)
    throw std::invalid_argument("resize_bilinear: target size " + size_text(width, height) + " is not positive");
  if (width == src.width && height == src.height) return src;
  return resample_window(src, width, height, 0, 0, width, height);
}

Image center_crop(const Image& src, int width, int height) {
  check_source(src, "center_crop");
  if (width < 1 || height < 1 || width > src.width || height > src.height)
    throw std::invalid_argument("center_crop: " + size_text(width, height) + " does not fit in the " +
                                size_text(src.width, src.height) + " image");
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
    throw std::invalid_argument("resize_shorter_then_center_crop: the " + size_text(src.width, src.height) +
                                " image resized to " + std::to_string(size) + " on its shorter side is too long");
  const int full_width = src.width <= src.height ? size : int(longer);
  const int full_height = src.width <= src.height ? int(longer) : size;
  const int x0 = (full_width - size) / 2, y0 = (full_height - size) / 2;
  return resample_window(src, full_width, full_height, x0, y0, size, size);
}

}  // namespace plugtrain::data
