// The image decoders (JPEG through TurboJPEG, PNG through libspng) on arbitrary bytes: a
// DataError is the expected answer to bad input, anything else is a bug. A decoded image is
// also decoded again at a reduced JPEG scale and resampled, so odd sizes reach the resizer.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "data/data_error.h"
#include "data/image_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace plugtrain::data;
  try {
    const Image image = decode_image(data, size, "fuzz");
    if (image.channels != 3 || image.pixels.size() != std::size_t(image.width) * std::size_t(image.height) * 3)
      __builtin_trap();
    const int shorter = std::min(image.width, image.height);
    // Keep each input fast: only small images go on to the scaled decode and the resizer.
    if (std::int64_t(image.width) * image.height <= (1 << 20)) {
      const Image scaled = decode_image(data, size, "fuzz", shorter / 3 + 1);
      if (scaled.width > image.width || scaled.height > image.height) __builtin_trap();
      resize_shorter_then_center_crop(scaled, 1 + shorter % 37);
      resize_bilinear(image, 1 + image.height % 41, 1 + image.width % 29);
    }
  } catch (const plugtrain::data::DataError&) {
  }
  return 0;
}
