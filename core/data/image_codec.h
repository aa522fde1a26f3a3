// Image files of the data pipeline: JPEG and PNG decoding to 8-bit RGB, PNG encoding, and
// the resampling that evaluation and fixed-size caches need (antialiased bilinear resize,
// centre crop). Plain byte buffers, no LibTorch: every function here is safe to call from
// several loader threads at once (each call has its own decoder state).
//
// Decoding
//   JPEG goes through libjpeg-turbo's TurboJPEG API, PNG through libspng. The format is told
//   by the magic bytes, never by the file name. The result is always interleaved H,W,C RGB
//   (channels = 3):
//   - JPEG: grayscale and YCbCr decode straight to RGB. CMYK and YCCK JPEGs decode to CMYK
//     and are converted with libjpeg-turbo's own formula (cmyk.h, used by its PPM writer),
//     which assumes the inverted values Adobe Photoshop writes (255 = no ink):
//     R = C*K/255, G = M*K/255, B = Y*K/255, rounded to nearest. No colour management
//     (ICC profiles are ignored). Pillow's convert("RGB") gives the same values for such
//     files (checked with Pillow 13). A 4-channel JPEG without Adobe's marker is taken as
//     inverted too (TurboJPEG 2.1 does not say whether the marker was there); Pillow takes
//     those as plain CMYK. Such files are rare.
//   - Any libjpeg warning is an error here: TurboJPEG reports corrupt or truncated data
//     ("Premature end of JPEG file", "Corrupt JPEG data: ...") as a warning (TJERR_WARNING)
//     and hands back a partly grey image; the pipeline wants such files reported, not
//     trained on. Decoding stops at the first warning (TJFLAG_STOPONWARNING), and
//     progressive files with an unreasonable number of scans are refused
//     (TJFLAG_LIMITSCANS). PIL accepts some of these files.
//   - min_side_hint > 0 (JPEG only) decodes with the smallest TurboJPEG scaling factor
//     (1/8, 1/4, 3/8, ... 1/1) whose shorter output side is still >= min_side_hint: a big
//     photo meant for a 224-pixel crop decodes 2 to 3 times faster. The result is then
//     smaller than the file's own size; never larger. PNG ignores the hint.
//   - PNG: every colour type and bit depth (palette, grayscale, grayscale+alpha, RGB, RGBA;
//     1 to 16 bits) becomes RGB8. Alpha is dropped, not composited (as PIL's
//     convert("RGB") does); tRNS transparency and gAMA are ignored; 16-bit samples keep
//     their high byte (v >> 8, libspng's conversion; Pillow does the same for 16-bit colour
//     but clips 16-bit grayscale at 255).
//   - Hostile files cannot make the decoder allocate without bound: either side above
//     kMaxImageSide or more than kMaxImagePixels pixels is refused before any pixel buffer
//     is allocated, and libspng's chunk size and chunk cache are capped.
//   - Every failure is a DataError of one line naming the file, e.g.
//     "cat.jpg: cannot decode JPEG: Premature end of JPEG file". Corrupt input never
//     crashes (fuzz/image_fuzz.cpp).
//   Known limit: TurboJPEG 2.1 refuses JPEGs whose chroma subsampling it cannot classify
//   (anything but 4:4:4, 4:2:2, 4:2:0, 4:4:0, 4:1:1, gray) with "Could not determine
//   subsampling type"; they are reported like any other undecodable file.
//
// Resampling (resize_bilinear) matches Pillow's Image.resize(size, Image.BILINEAR) bit for
// bit (checked against Pillow 13): a separable triangle filter whose support grows with the
// downscale factor (antialiasing), 22-bit fixed-point weights, one horizontal and one
// vertical pass each rounded to 8 bits. Horizontal first, as PIL always did, except where
// Pillow 13 does the vertical pass first: when it removes more than twice as many rows as
// the horizontal pass removes columns (the order changes the last bit). Upscaling is then
// plain bilinear interpolation with half-pixel centres (align_corners=false) and edge
// clamping.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace plugtrain::data {

// The largest image any decoder here accepts: each side, and the pixel count (128 Mi
// pixels, 384 MiB as RGB; larger than any camera's photo).
constexpr int kMaxImageSide = 65535;
constexpr int64_t kMaxImagePixels = int64_t(1) << 27;

// "640x480", for messages.
std::string image_size_text(int64_t width, int64_t height);

// Interleaved H,W,C 8-bit pixels, rows top to bottom: pixels[(y * width + x) * channels + c].
// Decoding always gives channels = 3 (RGB); resize and crop keep the channel count.
struct Image {
  int width = 0, height = 0, channels = 3;
  std::vector<uint8_t> pixels;
};

// Decodes a JPEG or PNG file's bytes to RGB (see above). name_for_errors starts every
// error message (usually the file's path). Throws DataError.
Image decode_image(const uint8_t* bytes, size_t size, const std::string& name_for_errors,
                   int min_side_hint = 0);

// A PNG file's bytes for an 8-bit image of 1 (grayscale) or 3 (RGB) channels, zlib's
// default compression. Throws DataError for any other shape or an encoder failure.
std::vector<uint8_t> encode_png(const Image& image);

// encode_png, written atomically (a temporary file beside `path` renamed over it, see
// util/atomic_file.h): readers see the old file or the whole new one. Throws DataError for
// a bad image, plugtrain::Error naming the path when the file cannot be written.
void write_png_file(const std::filesystem::path& path, const Image& image);

// PIL-exact antialiased bilinear resize to width x height (see above); the same size gives
// a copy. Throws std::invalid_argument for an empty source or a non-positive target size.
Image resize_bilinear(const Image& src, int width, int height);

// The centred width x height window (offsets floor((W - width) / 2), floor((H - height) /
// 2)). Throws std::invalid_argument when it is larger than the image or not positive.
Image center_crop(const Image& src, int width, int height);

// Resize so the shorter side is `size` (the longer one floor(size * long / short), as
// torchvision's Resize(int) does), then centre-crop size x size: the evaluation transform
// and the form a cache at a fixed size stores. Only the kept window is resampled; the
// result equals resize_bilinear followed by center_crop bit for bit.
Image resize_shorter_then_center_crop(const Image& src, int size);

}  // namespace plugtrain::data
