// A small bitmap font for labelling figures written as PNG (plugtrain data --grid): no
// font library, the same pixels on every machine.
#pragma once

#include <cstdint>
#include <string>

#include "data/image_codec.h"

namespace plugtrain {

constexpr int kGlyphWidth = 6, kGlyphHeight = 10;

// Draws `text` with its top-left corner at (x, y) in one colour; pixels outside the image
// are clipped. Characters outside printable ASCII are drawn as '?'.
void draw_text(data::Image& image, int x, int y, const std::string& text, uint8_t r, uint8_t g, uint8_t b);

}  // namespace plugtrain
