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


// The size limits, checked before any pixel buffer is allocated.
void check_dimensions(const std::string& name, const char* format, int64_t width, int64_t height) {
  if (width < 1 || height < 1)
    throw DataError(name + ": cannot decode " + format + ": no image size in the header (" +
                    image_size_text(width, height) + ")");
  if (width > kMaxImageSide || height > kMaxImageSide || width * height > kMaxImagePixels)
    throw DataError(name + ": " + format + " image of " + image_size_text(width, height) +
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
    throw fail("an image of " + image_size_text(image.width, image.height) + " pixels");
  const size_t expected = size_t(image.width) * size_t(image.height) * size_t(image.channels);
  if (image.pixels.size() != expected)
    throw fail(std::to_string(image.pixels.size()) + " bytes of pixels for " +
               image_size_text(image.width, image.height) + "x" + std::to_string(image.channels));

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

std::string image_size_text(int64_t width, int64_t height) {
  return std::to_string(width) + "x" + std::to_string(height);
}

}  // namespace plugtrain::data
