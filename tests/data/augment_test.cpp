// Per-sample augmentation (data/augment.h): each operation's geometry and values, its
// identity settings, and seeding (same seed, same image).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/config_error.h"
#include "config/experiment_loader.h"
#include "data/augment.h"
#include "data/data_error.h"

namespace plugtrain::data {
namespace augment_test {

struct Img {
  int64_t c, h, w;
  std::vector<float> px;
  float at(int64_t ch, int64_t y, int64_t x) const { return px[size_t((ch * h + y) * w + x)]; }
  ImageView view() { return {px.data(), c, h, w}; }
};

// Pixel values that tell every position apart, all inside (0, 1).
Img ramp(int64_t c, int64_t h, int64_t w) {
  Img im{c, h, w, std::vector<float>(size_t(c * h * w))};
  for (size_t i = 0; i < im.px.size(); ++i) im.px[i] = float(i + 1) / float(im.px.size() + 1);
  return im;
}

Img apply(const AugmentOptions& o, Img im, uint64_t seed, std::vector<float> fill = {}) {
  std::vector<float> scratch;
  SampleRng rng(seed);
  if (fill.empty()) fill.assign(size_t(im.c), 0.5f);
  Augmenter(o).apply(im.view(), rng, fill, scratch);
  return im;
}

AugmentOptions only(const std::string& name) {
  AugmentOptions o;
  o.order = {*choice_named<Augmentation>(name)};
  return o;
}

TEST(Augment, NothingListedIsTheIdentityAndUnknownNamesAreRefused) {
  const Img im = ramp(3, 5, 4);
  EXPECT_EQ(apply(AugmentOptions{}, im, 1).px, im.px);
  // An unknown name never reaches the augmenter: validation refuses it with the known ones.
  try {
    resolve_experiment(
        parse_experiment_text("[model]\nname = \"mlp\"\n[data]\naugmentation = [\"mixup\"]\n", "x.toml"));
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'mixup' is not one of [\"random_crop\", \"horizontal_flip\""),
              std::string::npos)
        << e.what();
  }
  AugmentOptions scale = only("random_resized_crop");
  scale.resized_crop_scale = {0.5, 0.2};
  EXPECT_THROW(Augmenter{scale}, DataError);
}

TEST(Augment, RandomCropIsAShiftedWindowFilledPerPaddingMode) {
  const Img im = ramp(2, 6, 5);
  for (auto mode : {PaddingMode::constant, PaddingMode::reflect, PaddingMode::edge}) {
    AugmentOptions o = only("random_crop");
    o.crop_padding = 2;
    o.crop_padding_mode = mode;
    std::set<std::pair<int64_t, int64_t>> shifts;
    for (uint64_t seed = 0; seed < 60; ++seed) {
      const Img out = apply(o, im, seed);
      // Find the shift (dy, dx) in [-2, 2] that explains every inside pixel.
      bool found = false;
      for (int64_t dy = -2; dy <= 2 && !found; ++dy) {
        for (int64_t dx = -2; dx <= 2 && !found; ++dx) {
          bool ok = true;
          for (int64_t c = 0; c < 2 && ok; ++c)
            for (int64_t y = 0; y < 6 && ok; ++y)
              for (int64_t x = 0; x < 5 && ok; ++x) {
                const int64_t sy = y + dy, sx = x + dx;
                const bool inside = sy >= 0 && sy < 6 && sx >= 0 && sx < 5;
                if (inside)
                  ok = out.at(c, y, x) == im.at(c, sy, sx);
                else if (mode == PaddingMode::constant)
                  ok = out.at(c, y, x) == 0.0f;
                else if (mode == PaddingMode::edge)
                  ok = out.at(c, y, x) == im.at(c, std::clamp<int64_t>(sy, 0, 5), std::clamp<int64_t>(sx, 0, 4));
                else  // reflect without repeating the edge
                  ok = out.at(c, y, x) == im.at(c,
                                                sy < 0   ? -sy
                                                : sy > 5 ? 10 - sy
                                                         : sy,
                                                sx < 0   ? -sx
                                                : sx > 4 ? 8 - sx
                                                         : sx);
              }
          if (ok) {
            found = true;
            shifts.insert({dy, dx});
          }
        }
      }
      EXPECT_TRUE(found) << "seed " << seed;
    }
    EXPECT_GT(shifts.size(), 10u) << "the shifts vary";
  }
  AugmentOptions none = only("random_crop");
  none.crop_padding = 0;
  EXPECT_EQ(apply(none, im, 3).px, im.px);
}

TEST(Augment, HorizontalFlipMirrorsWithItsProbability) {
  const Img im = ramp(3, 4, 6);
  Img mirrored = im;
  for (int64_t row = 0; row < 3 * 4; ++row)
    std::reverse(mirrored.px.begin() + row * 6, mirrored.px.begin() + row * 6 + 6);
  AugmentOptions o = only("horizontal_flip");
  int flips = 0;
  for (uint64_t seed = 0; seed < 400; ++seed) {
    const Img out = apply(o, im, seed);
    EXPECT_TRUE(out.px == im.px || out.px == mirrored.px);
    flips += out.px == mirrored.px;
  }
  EXPECT_GT(flips, 150);
  EXPECT_LT(flips, 250);
  o.flip_p = 1;
  EXPECT_EQ(apply(o, im, 1).px, mirrored.px);
  o.flip_p = 0;
  EXPECT_EQ(apply(o, im, 1).px, im.px);
}

TEST(Augment, RandomResizedCropOfTheWholeImageIsTheIdentityAndKeepsAConstantImage) {
  const Img im = ramp(3, 8, 8);
  AugmentOptions whole = only("random_resized_crop");
  whole.resized_crop_scale = {1.0, 1.0};
  whole.resized_crop_ratio = {1.0, 1.0};
  EXPECT_EQ(apply(whole, im, 9).px, im.px);

  Img flat{3, 16, 12, std::vector<float>(3 * 16 * 12, 0.25f)};
  const Img out = apply(only("random_resized_crop"), flat, 4);
  for (float v : out.px) EXPECT_NEAR(v, 0.25f, 1e-6);
  // A crop enlarges: a smooth ramp stays within the source's value range and changes.
  const Img zoomed = apply(only("random_resized_crop"), im, 5);
  EXPECT_NE(zoomed.px, im.px);
  for (float v : zoomed.px) {
    EXPECT_GE(v, *std::min_element(im.px.begin(), im.px.end()) - 1e-6);
    EXPECT_LE(v, *std::max_element(im.px.begin(), im.px.end()) + 1e-6);
  }
}

TEST(Augment, RotationKeepsTheCentreAndAZeroAngleIsTheIdentity) {
  Img im{1, 9, 9, std::vector<float>(81, 0.0f)};
  im.px[4 * 9 + 4] = 1.0f;  // a dot at the centre stays there whatever the angle
  AugmentOptions o = only("rotation");
  o.rotation_degrees = 90;
  for (uint64_t seed = 0; seed < 20; ++seed) EXPECT_NEAR(apply(o, im, seed).at(0, 4, 4), 1.0f, 1e-5);
  // A bar along the top row turns: after rotating, the top row's mass moves elsewhere.
  Img bar{1, 9, 9, std::vector<float>(81, 0.0f)};
  for (int x = 0; x < 9; ++x) bar.px[size_t(1 * 9 + x)] = 1.0f;
  o.rotation_degrees = 90;
  bool moved = false;
  for (uint64_t seed = 0; seed < 10; ++seed) moved = moved || apply(o, bar, seed).px != bar.px;
  EXPECT_TRUE(moved);
  o.rotation_degrees = 0;
  EXPECT_EQ(apply(o, bar, 1).px, bar.px);
}

TEST(Augment, TranslateIsAWholePixelShiftWithinItsRange) {
  const Img im = ramp(1, 10, 10);
  AugmentOptions o = only("translate");
  o.translate = {0.2, 0.1};  // up to 2 pixels across, 1 down
  for (uint64_t seed = 0; seed < 30; ++seed) {
    const Img out = apply(o, im, seed);
    bool found = false;
    for (int64_t ty = -1; ty <= 1 && !found; ++ty)
      for (int64_t tx = -2; tx <= 2 && !found; ++tx) {
        bool ok = true;
        for (int64_t y = 0; y < 10 && ok; ++y)
          for (int64_t x = 0; x < 10 && ok; ++x) {
            const int64_t sy = y - ty, sx = x - tx;
            const float want = (sy < 0 || sy >= 10 || sx < 0 || sx >= 10) ? 0.0f : im.at(0, sy, sx);
            ok = out.at(0, y, x) == want;
          }
        found = ok;
      }
    EXPECT_TRUE(found) << "seed " << seed;
  }
}

TEST(Augment, ColorJitterStaysInRangeBrightnessScalesAndGreyHasNoSaturation) {
  const Img im = ramp(3, 6, 6);
  for (uint64_t seed = 0; seed < 20; ++seed)
    for (float v : apply(only("color_jitter"), im, seed).px) {
      EXPECT_GE(v, 0.0f);
      EXPECT_LE(v, 1.0f);
    }
  AugmentOptions brightness = only("color_jitter");
  brightness.contrast = brightness.saturation = 0;
  brightness.brightness = 0.3;
  const Img dim{3, 2, 2, std::vector<float>(12, 0.5f)};
  const Img out = apply(brightness, dim, 7);
  EXPECT_GE(out.px[0], 0.5f * 0.7f - 1e-6);
  EXPECT_LE(out.px[0], 0.5f * 1.3f + 1e-6);
  for (float v : out.px) EXPECT_EQ(v, out.px[0]) << "one factor for the whole image";

  AugmentOptions saturation = only("color_jitter");
  saturation.brightness = saturation.contrast = 0;
  saturation.saturation = 0.9;
  Img grey{3, 3, 3, {}};
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < 9; ++i) grey.px.push_back(float(i) / 10.0f);
  const Img g = apply(saturation, grey, 3);
  for (size_t i = 0; i < grey.px.size(); ++i) EXPECT_NEAR(g.px[i], grey.px[i], 1e-6);
}

TEST(Augment, RandomErasingFillsOneRectangleWithTheFill) {
  const Img im = ramp(3, 16, 16);
  AugmentOptions o = only("random_erasing");
  o.erasing_p = 1;
  const std::vector<float> fill{0.1f, 0.2f, 0.3f};
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const Img out = apply(o, im, seed, fill);
    int64_t y0 = 99, y1 = -1, x0 = 99, x1 = -1, changed = 0;
    for (int64_t y = 0; y < 16; ++y)
      for (int64_t x = 0; x < 16; ++x)
        if (out.at(0, y, x) != im.at(0, y, x)) {
          ++changed;
          y0 = std::min(y0, y), y1 = std::max(y1, y), x0 = std::min(x0, x), x1 = std::max(x1, x);
          for (int64_t c = 0; c < 3; ++c) EXPECT_EQ(out.at(c, y, x), fill[size_t(c)]);
        }
    ASSERT_GT(changed, 0) << "seed " << seed;
    EXPECT_EQ(changed, (y1 - y0 + 1) * (x1 - x0 + 1)) << "a filled rectangle";
    EXPECT_LE(changed, int64_t(0.34 * 256));
  }
  o.erasing_p = 0;
  EXPECT_EQ(apply(o, im, 1).px, im.px);
}

TEST(Augment, SameSeedSameImageOtherSeedOtherImage) {
  AugmentOptions o;
  o.order = {Augmentation::random_resized_crop, Augmentation::horizontal_flip, Augmentation::rotation,
             Augmentation::color_jitter, Augmentation::random_erasing};
  const Img im = ramp(3, 12, 12);
  EXPECT_EQ(apply(o, im, 42).px, apply(o, im, 42).px);
  EXPECT_NE(apply(o, im, 42).px, apply(o, im, 43).px);
  EXPECT_NE(SampleRng::seed_of(1, 2, 0, 3), SampleRng::seed_of(1, 2, 0, 4));
  EXPECT_NE(SampleRng::seed_of(1, 2, 0, 3), SampleRng::seed_of(1, 3, 0, 3));
}

}  // namespace augment_test
}  // namespace plugtrain::data
