// The image codecs (data/image_codec.h): PNG and JPEG files made here with libspng's encoder
// and TurboJPEG's compressor in every colour type the decoder converts, decoded back to RGB
// and checked against known pixels; broken and hostile files give one-line DataErrors; the
// resampling's exact values (PIL's antialiased bilinear).
#include <spng.h>
#include <turbojpeg.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "data/data_error.h"
#include "data/image_codec.h"

namespace plugtrain::data {
namespace image_codec_test {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

// ---------------------------------------------------------------- helpers

// The DataError decoding `bytes` throws (fails the test when there is none), after checking
// that it is one line starting with the name.
std::string decode_error(const Bytes& bytes, const std::string& name = "pics/broken.img", int hint = 0) {
  try {
    decode_image(bytes.data(), bytes.size(), name, hint);
  } catch (const DataError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(name + ": ", 0), 0u) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    return msg;
  }
  ADD_FAILURE() << "no DataError thrown";
  return {};
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

Image decode(const Bytes& bytes, int hint = 0) { return decode_image(bytes.data(), bytes.size(), "test image", hint); }

Image make_image(int width, int height, int channels, uint8_t fill = 0) {
  Image im;
  im.width = width;
  im.height = height;
  im.channels = channels;
  im.pixels.assign(size_t(width) * height * channels, fill);
  return im;
}

Image random_image(int width, int height, int channels, unsigned seed) {
  Image im = make_image(width, height, channels);
  std::mt19937 rng(seed);
  for (auto& p : im.pixels) p = uint8_t(rng() & 0xFF);
  return im;
}

// A smooth RGB gradient, the kind of content JPEG keeps well.
Image gradient(int width, int height) {
  Image im = make_image(width, height, 3);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      uint8_t* p = &im.pixels[(size_t(y) * width + x) * 3];
      p[0] = uint8_t(20 + 200 * x / (width - 1));
      p[1] = uint8_t(230 - 200 * y / (height - 1));
      p[2] = uint8_t(60 + 120 * (x + y) / (width + height - 2));
    }
  return im;
}

double mean_abs_error(const Image& a, const Image& b) {
  EXPECT_EQ(a.width, b.width);
  EXPECT_EQ(a.height, b.height);
  EXPECT_EQ(a.channels, b.channels);
  if (a.pixels.size() != b.pixels.size() || a.pixels.empty()) return 1e9;
  double sum = 0;
  for (size_t i = 0; i < a.pixels.size(); ++i) sum += std::abs(int(a.pixels[i]) - int(b.pixels[i]));
  return sum / double(a.pixels.size());
}

// A PNG written by libspng from raw samples in the PNG's own layout (rows packed for bit
// depths below 8, host-endian for 16 bits).
Bytes spng_file(uint32_t width, uint32_t height, uint8_t color_type, uint8_t bit_depth, const Bytes& raw,
                const std::vector<spng_plte_entry>& palette = {}) {
  spng_ctx* ctx = spng_ctx_new(SPNG_CTX_ENCODER);
  EXPECT_NE(ctx, nullptr);
  EXPECT_EQ(spng_set_option(ctx, SPNG_ENCODE_TO_BUFFER, 1), 0);
  spng_ihdr ihdr{};
  ihdr.width = width;
  ihdr.height = height;
  ihdr.bit_depth = bit_depth;
  ihdr.color_type = color_type;
  EXPECT_EQ(spng_set_ihdr(ctx, &ihdr), 0);
  if (!palette.empty()) {
    spng_plte plte{};
    plte.n_entries = uint32_t(palette.size());
    for (size_t i = 0; i < palette.size(); ++i) plte.entries[i] = palette[i];
    EXPECT_EQ(spng_set_plte(ctx, &plte), 0);
  }
  const int rc = spng_encode_image(ctx, raw.data(), raw.size(), SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE);
  EXPECT_EQ(rc, 0) << spng_strerror(rc);
  size_t length = 0;
  int error = 0;
  void* buffer = spng_get_png_buffer(ctx, &length, &error);
  EXPECT_NE(buffer, nullptr) << spng_strerror(error);
  Bytes out(static_cast<uint8_t*>(buffer), static_cast<uint8_t*>(buffer) + length);
  std::free(buffer);
  spng_ctx_free(ctx);
  return out;
}

// A JPEG written by TurboJPEG from packed pixels of the given TJPF_ format.
Bytes jpeg_file(const Bytes& pixels, int width, int height, int pixel_format, int subsampling, int quality = 95) {
  tjhandle tj = tjInitCompress();
  EXPECT_NE(tj, nullptr);
  unsigned char* buffer = nullptr;
  unsigned long length = 0;
  const int rc =
      tjCompress2(tj, pixels.data(), width, 0, height, pixel_format, &buffer, &length, subsampling, quality, 0);
  EXPECT_EQ(rc, 0) << tjGetErrorStr2(tj);
  Bytes out(buffer, buffer + length);
  tjFree(buffer);
  tjDestroy(tj);
  return out;
}

Bytes jpeg_of(const Image& rgb, int subsampling = TJSAMP_444, int quality = 95) {
  return jpeg_file(rgb.pixels, rgb.width, rgb.height, TJPF_RGB, subsampling, quality);
}

// libjpeg-turbo's rgb_to_cmyk (cmyk.h): Adobe-style inverted CMYK, 255 = no ink.
Bytes inverted_cmyk_of(const Image& rgb) {
  Bytes out;
  for (size_t i = 0; i < rgb.pixels.size(); i += 3) {
    const double c = 1 - rgb.pixels[i] / 255.0, m = 1 - rgb.pixels[i + 1] / 255.0, y = 1 - rgb.pixels[i + 2] / 255.0;
    const double k = std::min(std::min(c, m), y);
    const double s = k == 1.0 ? 0.0 : 1.0 / (1.0 - k);
    for (double v : {(c - k) * s, (m - k) * s, (y - k) * s, k}) out.push_back(uint8_t(255.0 - v * 255.0 + 0.5));
  }
  return out;
}

void put_be32(Bytes& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(uint8_t(v >> shift));
}

// A PNG of only a signature, an IHDR claiming width x height RGB8 (valid CRC) and IEND.
Bytes png_header_only(uint32_t width, uint32_t height) {
  Bytes out{0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  auto chunk = [&](const char* type, const Bytes& data) {
    put_be32(out, uint32_t(data.size()));
    Bytes body(type, type + 4);
    body.insert(body.end(), data.begin(), data.end());
    out.insert(out.end(), body.begin(), body.end());
    put_be32(out, uint32_t(crc32(0, body.data(), uInt(body.size()))));
  };
  Bytes ihdr;
  put_be32(ihdr, width);
  put_be32(ihdr, height);
  ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0});
  chunk("IHDR", ihdr);
  chunk("IEND", {});
  return out;
}

const uint8_t* pixel(const Image& im, int x, int y) { return &im.pixels[(size_t(y) * im.width + x) * im.channels]; }

void expect_rgb(const Image& im, int x, int y, int r, int g, int b) {
  const uint8_t* p = pixel(im, x, y);
  EXPECT_EQ(int(p[0]), r) << "at " << x << "," << y;
  EXPECT_EQ(int(p[1]), g) << "at " << x << "," << y;
  EXPECT_EQ(int(p[2]), b) << "at " << x << "," << y;
}

// ---------------------------------------------------------------- PNG

TEST(ImageCodecPng, RgbRoundTripIsExact) {
  const Image src = random_image(37, 23, 3, 1);
  const Bytes png = encode_png(src);
  ASSERT_GE(png.size(), 8u);
  EXPECT_EQ(png[0], 0x89);
  const Image back = decode(png);
  EXPECT_EQ(back.width, 37);
  EXPECT_EQ(back.height, 23);
  EXPECT_EQ(back.channels, 3);
  EXPECT_EQ(back.pixels, src.pixels);
}

TEST(ImageCodecPng, GrayscaleImageEncodesAndDecodesToEqualRgb) {
  const Image src = random_image(9, 5, 1, 2);
  const Image back = decode(encode_png(src));
  ASSERT_EQ(back.channels, 3);
  ASSERT_EQ(back.pixels.size(), src.pixels.size() * 3);
  for (size_t i = 0; i < src.pixels.size(); ++i)
    for (int c = 0; c < 3; ++c) ASSERT_EQ(back.pixels[i * 3 + c], src.pixels[i]) << i;
}

TEST(ImageCodecPng, GrayscaleDepthsScaleToFullRange) {
  // 8-bit: as is. 2-bit: 0..3 -> 0, 85, 170, 255. 16-bit: the high byte.
  const Image g8 = decode(spng_file(3, 1, SPNG_COLOR_TYPE_GRAYSCALE, 8, {0, 77, 255}));
  expect_rgb(g8, 0, 0, 0, 0, 0);
  expect_rgb(g8, 1, 0, 77, 77, 77);
  expect_rgb(g8, 2, 0, 255, 255, 255);

  const Image g2 = decode(spng_file(4, 1, SPNG_COLOR_TYPE_GRAYSCALE, 2, {0b00011011}));
  for (int x = 0; x < 4; ++x) expect_rgb(g2, x, 0, 85 * x, 85 * x, 85 * x);

  Bytes raw16(4);
  const uint16_t samples[2] = {0x1234, 0xFFFF};
  std::memcpy(raw16.data(), samples, 4);  // SPNG_FMT_PNG takes host-endian 16-bit samples
  const Image g16 = decode(spng_file(2, 1, SPNG_COLOR_TYPE_GRAYSCALE, 16, raw16));
  expect_rgb(g16, 0, 0, 0x12, 0x12, 0x12);
  expect_rgb(g16, 1, 0, 255, 255, 255);
}

TEST(ImageCodecPng, GrayscaleAlphaDropsAlpha) {
  const Image im = decode(spng_file(2, 1, SPNG_COLOR_TYPE_GRAYSCALE_ALPHA, 8, {100, 0, 200, 128}));
  expect_rgb(im, 0, 0, 100, 100, 100);
  expect_rgb(im, 1, 0, 200, 200, 200);
}

TEST(ImageCodecPng, PaletteBecomesItsColours) {
  const std::vector<spng_plte_entry> palette{{255, 0, 0, 0}, {0, 128, 0, 0}, {10, 20, 30, 0}, {1, 2, 3, 0}};
  const Image p8 = decode(spng_file(4, 2, SPNG_COLOR_TYPE_INDEXED, 8, {0, 1, 2, 3, 3, 2, 1, 0}, palette));
  ASSERT_EQ(p8.width, 4);
  ASSERT_EQ(p8.height, 2);
  expect_rgb(p8, 0, 0, 255, 0, 0);
  expect_rgb(p8, 1, 0, 0, 128, 0);
  expect_rgb(p8, 2, 0, 10, 20, 30);
  expect_rgb(p8, 3, 0, 1, 2, 3);
  expect_rgb(p8, 0, 1, 1, 2, 3);
  expect_rgb(p8, 3, 1, 255, 0, 0);

  // 4-bit indices, two to a byte.
  const Image p4 = decode(spng_file(3, 1, SPNG_COLOR_TYPE_INDEXED, 4, {0x21, 0x30}, palette));
  expect_rgb(p4, 0, 0, 10, 20, 30);
  expect_rgb(p4, 1, 0, 0, 128, 0);
  expect_rgb(p4, 2, 0, 1, 2, 3);
}

TEST(ImageCodecPng, RgbaDropsAlphaAndSixteenBitKeepsHighByte) {
  const Image rgba = decode(spng_file(2, 1, SPNG_COLOR_TYPE_TRUECOLOR_ALPHA, 8, {10, 20, 30, 0, 40, 50, 60, 255}));
  expect_rgb(rgba, 0, 0, 10, 20, 30);
  expect_rgb(rgba, 1, 0, 40, 50, 60);

  const uint16_t rgb16[6] = {0x0102, 0xA0FF, 0xFF00, 0x0000, 0x7F80, 0xFFFF};
  Bytes raw(sizeof rgb16);
  std::memcpy(raw.data(), rgb16, sizeof rgb16);
  const Image im16 = decode(spng_file(2, 1, SPNG_COLOR_TYPE_TRUECOLOR, 16, raw));
  expect_rgb(im16, 0, 0, 0x01, 0xA0, 0xFF);
  expect_rgb(im16, 1, 0, 0x00, 0x7F, 0xFF);

  const uint16_t rgba16[4] = {0x3344, 0x5566, 0x7788, 0x0000};
  Bytes raw_a(sizeof rgba16);
  std::memcpy(raw_a.data(), rgba16, sizeof rgba16);
  expect_rgb(decode(spng_file(1, 1, SPNG_COLOR_TYPE_TRUECOLOR_ALPHA, 16, raw_a)), 0, 0, 0x33, 0x55, 0x77);
}

TEST(ImageCodecPng, WritePngFileIsAtomicAndReadsBack) {
  const fs::path dir = fs::temp_directory_path() / ("plugtrain_image_codec_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path path = dir / "cache.png";
  const Image first = random_image(16, 8, 3, 3), second = random_image(5, 7, 3, 4);
  write_png_file(path, first);
  write_png_file(path, second);  // replaces the first
  std::ifstream in(path, std::ios::binary);
  const Bytes bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_EQ(decode(bytes).pixels, second.pixels);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1) << "a temporary file was left";

  Image bad = make_image(4, 4, 2);  // two channels are not written
  try {
    write_png_file(dir / "bad.png", bad);
    ADD_FAILURE() << "no DataError";
  } catch (const DataError& e) {
    EXPECT_TRUE(has(e.what(), (dir / "bad.png").string() + ": cannot encode PNG")) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "bad.png"));
  bad.channels = 3;  // pixel count no longer matches
  EXPECT_THROW(encode_png(bad), DataError);
  fs::remove_all(dir);
}

// ---------------------------------------------------------------- JPEG

TEST(ImageCodecJpeg, RgbDecodesCloseToTheSource) {
  const Image src = gradient(96, 64);
  for (int subsampling : {TJSAMP_444, TJSAMP_420}) {
    const Image im = decode(jpeg_of(src, subsampling));
    EXPECT_EQ(im.channels, 3);
    EXPECT_LT(mean_abs_error(im, src), 3.0) << "subsampling " << subsampling;
  }
}

TEST(ImageCodecJpeg, GrayscaleDecodesToEqualChannels) {
  Image gray = make_image(64, 48, 1);
  for (int y = 0; y < 48; ++y)
    for (int x = 0; x < 64; ++x) gray.pixels[size_t(y) * 64 + x] = uint8_t(30 + 3 * x + y);
  const Image im = decode(jpeg_file(gray.pixels, 64, 48, TJPF_GRAY, TJSAMP_GRAY));
  ASSERT_EQ(im.channels, 3);
  ASSERT_EQ(im.pixels.size(), gray.pixels.size() * 3);
  double err = 0;
  for (size_t i = 0; i < gray.pixels.size(); ++i) {
    ASSERT_EQ(im.pixels[i * 3], im.pixels[i * 3 + 1]);
    ASSERT_EQ(im.pixels[i * 3], im.pixels[i * 3 + 2]);
    err += std::abs(int(im.pixels[i * 3]) - int(gray.pixels[i]));
  }
  EXPECT_LT(err / double(gray.pixels.size()), 3.0);
}

TEST(ImageCodecJpeg, CmykDecodesToRgb) {
  // TurboJPEG writes packed CMYK as a YCCK JPEG with an Adobe marker, the way Photoshop does.
  const Image src = gradient(80, 56);
  const Bytes jpeg = jpeg_file(inverted_cmyk_of(src), src.width, src.height, TJPF_CMYK, TJSAMP_444);
  const Image im = decode(jpeg);
  EXPECT_EQ(im.channels, 3);
  EXPECT_LT(mean_abs_error(im, src), 3.0);
  // Scaled decoding goes through the same conversion.
  const Image half = decode(jpeg, 28);
  EXPECT_EQ(half.width, 40);
  EXPECT_EQ(half.height, 28);
  EXPECT_LT(mean_abs_error(half, resize_bilinear(src, 40, 28)), 3.0);
}

TEST(ImageCodecJpeg, MinSideHintPicksTheSmallestScaleThatIsLargeEnough) {
  const Image src = gradient(640, 480);
  const Bytes jpeg = jpeg_of(src, TJSAMP_420, 90);
  struct Case {
    int hint, width, height;
  };
  for (const Case& c : {Case{0, 640, 480}, Case{1000, 640, 480}, Case{480, 640, 480}, Case{479, 640, 480},
                        Case{420, 560, 420}, Case{224, 320, 240}, Case{240, 320, 240}, Case{241, 400, 300},
                        Case{100, 160, 120}, Case{60, 80, 60}, Case{1, 80, 60}}) {
    const Image im = decode(jpeg, c.hint);
    EXPECT_EQ(im.width, c.width) << "hint " << c.hint;
    EXPECT_EQ(im.height, c.height) << "hint " << c.hint;
    EXPECT_EQ(im.pixels.size(), size_t(c.width) * c.height * 3);
  }
  // The scaled decode shows the same picture.
  EXPECT_LT(mean_abs_error(decode(jpeg, 224), resize_bilinear(src, 320, 240)), 3.0);
}

// ---------------------------------------------------------------- broken and hostile files

TEST(ImageCodecErrors, TruncatedJpegIsAnErrorNotAGreyImage) {
  const Bytes jpeg = jpeg_of(gradient(64, 64));
  // Cut in the entropy-coded data: libjpeg only warns ("Premature end of JPEG file").
  const std::string msg = decode_error(Bytes(jpeg.begin(), jpeg.begin() + long(jpeg.size() * 2 / 3)));
  EXPECT_TRUE(has(msg, ": cannot decode JPEG: ")) << msg;
  // Cut in the headers, and just the magic.
  EXPECT_TRUE(has(decode_error(Bytes(jpeg.begin(), jpeg.begin() + 40)), "cannot decode JPEG"));
  EXPECT_TRUE(has(decode_error(Bytes{0xFF, 0xD8, 0xFF}), "cannot decode JPEG"));
  // Every prefix fails cleanly (cuts anywhere).
  for (size_t n = 0; n + 2 < jpeg.size(); n += 7) decode_error(Bytes(jpeg.begin(), jpeg.begin() + long(n)));
}

TEST(ImageCodecErrors, CorruptJpegDataIsAnError) {
  Bytes jpeg = jpeg_of(gradient(64, 64));
  // Overwrite the middle of the scan with a marker-like pattern.
  for (size_t i = jpeg.size() / 2; i < jpeg.size() / 2 + 16; ++i) jpeg[i] = (i % 2) ? 0xD3 : 0xFF;
  EXPECT_TRUE(has(decode_error(jpeg), "cannot decode JPEG"));
}

TEST(ImageCodecErrors, TruncatedPngIsAnError) {
  const Bytes png = encode_png(random_image(40, 30, 3, 5));
  const std::string msg = decode_error(Bytes(png.begin(), png.begin() + long(png.size() / 2)));
  EXPECT_TRUE(has(msg, ": cannot decode PNG: ")) << msg;
  for (size_t n = 4; n + 12 < png.size(); n += 5) decode_error(Bytes(png.begin(), png.begin() + long(n)));
  // A flipped bit in the pixel data breaks a checksum.
  Bytes flipped = png;
  flipped[png.size() / 2] ^= 0x10;
  EXPECT_TRUE(has(decode_error(flipped), "cannot decode PNG"));
}

TEST(ImageCodecErrors, RandomBytesAndEmptyBuffers) {
  std::mt19937 rng(7);
  Bytes noise(1000);
  for (auto& b : noise) b = uint8_t(rng());
  noise[0] = 0x00;
  EXPECT_EQ(decode_error(noise, "a/b.jpg"), "a/b.jpg: not a JPEG or PNG image");
  EXPECT_EQ(decode_error(Bytes{}, "empty.png"), "empty.png: not a JPEG or PNG image");
  try {
    decode_image(nullptr, 0, "null", 0);
    ADD_FAILURE() << "no DataError";
  } catch (const DataError& e) { EXPECT_STREQ(e.what(), "null: not a JPEG or PNG image"); }
  // Random bytes behind each magic.
  for (const Bytes& magic : {Bytes{0xFF, 0xD8, 0xFF}, Bytes{0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'}}) {
    for (int round = 0; round < 50; ++round) {
      Bytes bytes = magic;
      const size_t n = rng() % 300;
      for (size_t i = 0; i < n; ++i) bytes.push_back(uint8_t(rng()));
      decode_error(bytes);
    }
  }
}

TEST(ImageCodecErrors, HugeClaimedSizesAreRefusedBeforeAllocating) {
  const std::string too_wide = decode_error(png_header_only(100000, 100000), "huge.png");
  EXPECT_TRUE(has(too_wide, "huge.png: cannot decode PNG: ")) << too_wide;
  const std::string too_many = decode_error(png_header_only(20000, 20000), "many.png");
  EXPECT_EQ(too_many,
            "many.png: PNG image of 20000x20000 pixels is larger than the decoder accepts "
            "(65535 per side, 128 Mi pixels)");

  // A real JPEG whose frame header is patched to claim 60000 x 60000.
  Bytes jpeg = jpeg_of(gradient(16, 16));
  size_t sof = 2;  // walk the marker segments after SOI up to the baseline frame header
  while (sof + 9 < jpeg.size() && !(jpeg[sof] == 0xFF && jpeg[sof + 1] == 0xC0))
    sof += 2 + (size_t(jpeg[sof + 2]) << 8 | jpeg[sof + 3]);
  ASSERT_LT(sof + 9, jpeg.size());
  jpeg[sof + 5] = jpeg[sof + 7] = 60000 >> 8;
  jpeg[sof + 6] = jpeg[sof + 8] = 60000 & 0xFF;
  EXPECT_EQ(decode_error(jpeg, "huge.jpg", 224),
            "huge.jpg: JPEG image of 60000x60000 pixels is larger than the decoder accepts "
            "(65535 per side, 128 Mi pixels)");
}

// ---------------------------------------------------------------- resampling

TEST(ImageCodecResize, ConstantImageStaysConstant) {
  const Image flat = make_image(100, 80, 3, 173);
  for (auto [w, h] : {std::pair{33, 17}, std::pair{250, 190}, std::pair{100, 7}, std::pair{1, 1}}) {
    const Image out = resize_bilinear(flat, w, h);
    ASSERT_EQ(out.width, w);
    ASSERT_EQ(out.height, h);
    ASSERT_EQ(out.channels, 3);
    for (uint8_t v : out.pixels) ASSERT_EQ(v, 173) << w << "x" << h;
  }
}

TEST(ImageCodecResize, HalvingACheckerboardAveragesToGrey) {
  Image board = make_image(64, 64, 1);
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 64; ++x) board.pixels[size_t(y) * 64 + x] = ((x + y) % 2) ? 255 : 0;
  const Image half = resize_bilinear(board, 32, 32);
  // Without antialiasing a 2x bilinear reduction samples between two pixels of a row and
  // gives stripes; the triangle filter widened to 4 taps gives grey. Only the outer ring,
  // whose taps are cut by the border, is off middle grey.
  double sum = 0;
  for (int y = 0; y < 32; ++y)
    for (int x = 0; x < 32; ++x) {
      const int v = half.pixels[size_t(y) * 32 + x];
      sum += v;
      if (x > 0 && y > 0 && x < 31 && y < 31)
        ASSERT_NEAR(v, 127.5, 1.0) << x << "," << y;
      else
        ASSERT_NEAR(v, 127.5, 40.0) << x << "," << y;
    }
  EXPECT_NEAR(sum / (32 * 32), 127.5, 2.0);
}

TEST(ImageCodecResize, SameSizeIsIdentity) {
  const Image src = random_image(31, 17, 3, 9);
  EXPECT_EQ(resize_bilinear(src, 31, 17).pixels, src.pixels);
}

TEST(ImageCodecResize, UpscalingIsBilinearWithHalfPixelCentres) {
  // 2x2 -> 4x4: the output centres fall at -0.25, 0.25, 0.75, 1.25 source pixels (clamped at
  // the edges); rows first, each pass rounded to 8 bits.
  Image src = make_image(2, 2, 1);
  src.pixels = {0, 100, 200, 40};
  const Image out = resize_bilinear(src, 4, 4);
  const std::vector<uint8_t> expected{0,   25,  75, 100,  //
                                      50,  59,  76, 85,   //
                                      150, 126, 79, 55,   //
                                      200, 160, 80, 40};
  EXPECT_EQ(out.pixels, expected);

  // Every channel alike.
  Image rgb = make_image(2, 2, 3);
  for (size_t i = 0; i < 4; ++i)
    for (int c = 0; c < 3; ++c) rgb.pixels[i * 3 + c] = src.pixels[i];
  const Image out3 = resize_bilinear(rgb, 4, 4);
  for (size_t i = 0; i < 16; ++i)
    for (int c = 0; c < 3; ++c) ASSERT_EQ(out3.pixels[i * 3 + c], expected[i]);
}

TEST(ImageCodecResize, PassOrderFollowsPillow) {
  // A one-axis resize is a single pass, so chaining two gives either order explicitly.
  // Pillow 13 runs the vertical pass first when it removes more than twice as many rows as
  // the horizontal pass removes columns; each pass rounds, so the order shows in the last bit.
  struct Case {
    int width, height, to_width, to_height;
    bool vertical_first;
  };
  int orders_differ = 0;
  for (const Case& c : {Case{53, 37, 80, 20, true}, Case{53, 37, 30, 20, false}, Case{14, 54, 3, 22, true},
                        Case{57, 37, 53, 32, false}, Case{40, 30, 90, 70, false}, Case{30, 40, 20, 90, false}}) {
    const Image src = random_image(c.width, c.height, 3, unsigned(c.to_width * 100 + c.to_height));
    const Image vh = resize_bilinear(resize_bilinear(src, c.width, c.to_height), c.to_width, c.to_height);
    const Image hv = resize_bilinear(resize_bilinear(src, c.to_width, c.height), c.to_width, c.to_height);
    const Image out = resize_bilinear(src, c.to_width, c.to_height);
    EXPECT_EQ(out.pixels, c.vertical_first ? vh.pixels : hv.pixels)
        << c.width << "x" << c.height << " -> " << c.to_width << "x" << c.to_height;
    orders_differ += vh.pixels != hv.pixels;
  }
  EXPECT_GE(orders_differ, 4);  // the cases do tell the orders apart
}

TEST(ImageCodecResize, CenterCropPicksTheMiddle) {
  Image src = make_image(5, 4, 1);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 5; ++x) src.pixels[size_t(y) * 5 + x] = uint8_t(10 * y + x);
  EXPECT_EQ(center_crop(src, 3, 2).pixels, (std::vector<uint8_t>{11, 12, 13, 21, 22, 23}));
  EXPECT_EQ(center_crop(src, 2, 2).pixels, (std::vector<uint8_t>{11, 12, 21, 22}));  // floor of 1.5
  EXPECT_EQ(center_crop(src, 5, 4).pixels, src.pixels);
  EXPECT_THROW(center_crop(src, 6, 4), std::invalid_argument);
  EXPECT_THROW(center_crop(src, 0, 4), std::invalid_argument);
  EXPECT_THROW(resize_bilinear(src, 0, 3), std::invalid_argument);
  EXPECT_THROW(resize_bilinear(Image{}, 3, 3), std::invalid_argument);
}

TEST(ImageCodecResize, ShorterSideThenCropEqualsResizeAndCrop) {
  struct Case {
    int width, height, size, full_width, full_height;
  };
  // The longer side is floor(size * long / short), as torchvision's Resize(int).
  for (const Case& c : {Case{97, 61, 32, 50, 32}, Case{61, 97, 32, 32, 50}, Case{97, 61, 80, 127, 80},
                        Case{40, 40, 40, 40, 40}, Case{500, 375, 224, 298, 224}, Case{64, 48, 48, 64, 48}}) {
    const Image src = random_image(c.width, c.height, 3, unsigned(c.width * 1000 + c.size));
    const Image fast = resize_shorter_then_center_crop(src, c.size);
    const Image slow = center_crop(resize_bilinear(src, c.full_width, c.full_height), c.size, c.size);
    ASSERT_EQ(fast.width, c.size);
    ASSERT_EQ(fast.height, c.size);
    EXPECT_EQ(fast.pixels, slow.pixels) << c.width << "x" << c.height << " -> " << c.size;
  }
}

}  // namespace image_codec_test
}  // namespace plugtrain::data
