// A small CE-CSL set in the release layout (sign_language plugin, ce_csl_reader.h): label/<split>.csv
// with CE-CSL's columns, and each video's frames as JPEG files in video/<split>/<Translator>/<Number>/.
// Learnable: gloss k is signed as a square of its own colour at its own place for 4 to 6 frames;
// rest frames (dark noise) come before, between and after the signs; sentences are 1 to 3 glosses,
// no gloss twice in a row. Header-only; needs TurboJPEG (support/image_data.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "support/image_data.h"

namespace plugtrain::testing {

inline const std::vector<std::string>& ce_csl_glosses() {
  static const std::vector<std::string> glosses = {"我", "你", "喜欢", "学习", "手语"};
  return glosses;
}

// One frame, side x side: noise, and gloss `sign`'s square unless sign < 0 (a rest frame).
inline data::Image ce_csl_frame(int sign, int side, std::mt19937& rng) {
  data::Image im;
  im.width = im.height = side;
  im.pixels.resize(std::size_t(side) * side * 3);
  std::uniform_int_distribution<int> noise(0, 40);
  for (auto& p : im.pixels) p = std::uint8_t(noise(rng));
  if (sign < 0) return im;
  const int square = side / 3, x0 = (sign % 3) * side / 3, y0 = (sign / 3) * side / 2;
  for (int y = y0; y < y0 + square; ++y)
    for (int x = x0; x < x0 + square; ++x)
      for (int c = 0; c < 3; ++c) im.pixels[(std::size_t(y) * side + x) * 3 + c] = class_colour(sign, c);
  return im;
}

// Writes `videos` videos of `split` under root; `seed` makes the set.
inline void write_ce_csl_split(const std::filesystem::path& root, const std::string& split, int videos, int side,
                               unsigned seed) {
  std::mt19937 rng(seed);
  const auto& glosses = ce_csl_glosses();
  std::filesystem::create_directories(root / "label");
  std::ofstream csv(root / "label" / (split + ".csv"));
  csv << "Number,Translator,Chinese Sentences,Gloss,Note\n";
  for (int v = 0; v < videos; ++v) {
    const std::string number = split + "-" + std::to_string(10000 + v).substr(1);
    const std::string translator(1, char('A' + v % 3));
    std::vector<int> sentence;
    const int length = 1 + int(rng() % 3);
    while (int(sentence.size()) < length) {
      const int g = int(rng() % glosses.size());
      if (sentence.empty() || sentence.back() != g) sentence.push_back(g);
    }
    std::vector<int> frames(2 + rng() % 2, -1);  // rest, then each sign and a rest after it
    std::string gloss_field, words;
    for (int g : sentence) {
      frames.insert(frames.end(), 4 + rng() % 3, g);
      frames.insert(frames.end(), 2 + rng() % 2, -1);
      gloss_field += (gloss_field.empty() ? "" : "/") + glosses[g];
      words += (words.empty() ? "" : ", ") + glosses[g];
    }
    csv << number << "," << translator << ",\"" << words << "\"," << gloss_field << ",\n";
    const std::filesystem::path folder = root / "video" / split / translator / number;
    std::filesystem::create_directories(folder);
    for (std::size_t f = 0; f < frames.size(); ++f) {
      char name[16];
      std::snprintf(name, sizeof name, "%06zu.jpg", f + 1);
      write_image(folder / name, ce_csl_frame(frames[f], side, rng));
    }
  }
}

}  // namespace plugtrain::testing
