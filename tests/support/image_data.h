// Test data in the exact on-disk formats of the image data sets (data cannot be downloaded
// here): CIFAR-10/100 binary batches, image folders of PNG and JPEG files, the TinyImageNet
// layout. Every image is its class's colour plus seeded noise, so a small network learns
// them quickly. Header-only; needs plugtrain_core (PNG encoding) and TurboJPEG.
#pragma once

#include <turbojpeg.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "data/image_codec.h"

namespace plugtrain::testing {

namespace fs = std::filesystem;

// The colour of class k, channel c: far apart for neighbouring classes, and at least 30
// from black and white so the noise below is never clipped.
inline uint8_t class_colour(int64_t k, int c) {
  static const int mul[3] = {67, 151, 29}, add[3] = {0, 80, 160};
  return uint8_t(30 + (k * mul[c] + add[c]) % 196);
}

// Planar C,H,W bytes of sample `i` of class k: the class colour plus noise in [-24, 24].
inline std::vector<uint8_t> class_pixels(int64_t k, int64_t i, int h, int w) {
  std::vector<uint8_t> px(size_t(3 * h * w));
  uint64_t state = uint64_t(i) * 0x9E3779B97F4A7C15ull + uint64_t(k) + 1;
  for (int c = 0; c < 3; ++c)
    for (int p = 0; p < h * w; ++p) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const int noise = int((state >> 33) % 49) - 24;
      px[size_t(c * h * w + p)] = uint8_t(std::clamp(int(class_colour(k, c)) + noise, 0, 255));
    }
  return px;
}

inline void write_bytes(const fs::path& path, const std::vector<uint8_t>& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

// One CIFAR binary file of `n` records: label bytes (1 for CIFAR-10, 2 for CIFAR-100:
// coarse = fine / 5, fine), then the 3072 planar pixels. Labels are (first + i) % classes.
inline std::vector<uint8_t> cifar_records(int64_t n, int64_t classes, bool cifar100, int64_t first = 0) {
  std::vector<uint8_t> out;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = (first + i) % classes;
    if (cifar100) out.push_back(uint8_t(k / 5));
    out.push_back(uint8_t(k));
    const auto px = class_pixels(k, first + i, 32, 32);
    out.insert(out.end(), px.begin(), px.end());
  }
  return out;
}

// The extracted CIFAR-10 folder: data_batch_1..5.bin with `per_batch` records, test_batch.bin
// with `test` records, batches.meta.txt.
inline void write_cifar10(const fs::path& dir, int64_t per_batch, int64_t test) {
  for (int b = 1; b <= 5; ++b)
    write_bytes(dir / ("data_batch_" + std::to_string(b) + ".bin"), cifar_records(per_batch, 10, false, b * per_batch));
  write_bytes(dir / "test_batch.bin", cifar_records(test, 10, false, 7));
  std::ofstream(dir / "batches.meta.txt")
      << "airplane\nautomobile\nbird\ncat\ndeer\ndog\nfrog\nhorse\nship\ntruck\n\n";
}

// The extracted CIFAR-100 folder: train.bin, test.bin, fine and coarse label names.
inline void write_cifar100(const fs::path& dir, int64_t train, int64_t test) {
  write_bytes(dir / "train.bin", cifar_records(train, 100, true));
  write_bytes(dir / "test.bin", cifar_records(test, 100, true, 3));
  std::ofstream fine(dir / "fine_label_names.txt"), coarse(dir / "coarse_label_names.txt");
  for (int k = 0; k < 100; ++k) fine << "fine" << k << "\n";
  for (int k = 0; k < 20; ++k) coarse << "coarse" << k << "\n";
}

// Interleaved RGB image of class k, sample i.
inline data::Image class_image(int64_t k, int64_t i, int h, int w) {
  const auto planar = class_pixels(k, i, h, w);
  data::Image im{w, h, 3, std::vector<uint8_t>(planar.size())};
  for (int p = 0; p < h * w; ++p)
    for (int c = 0; c < 3; ++c) im.pixels[size_t(3 * p + c)] = planar[size_t(c * h * w + p)];
  return im;
}

inline std::vector<uint8_t> encode_jpeg(const data::Image& im, int quality = 90) {
  tjhandle handle = tjInitCompress();
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  const int rc = tjCompress2(handle, im.pixels.data(), im.width, 0, im.height, TJPF_RGB, &buffer, &size, TJSAMP_420,
                             quality, 0);
  std::vector<uint8_t> out;
  if (rc == 0) out.assign(buffer, buffer + size);
  tjFree(buffer);
  tjDestroy(handle);
  return out;
}

// One image file: PNG, or JPEG when the name ends in .jpg/.JPEG.
inline void write_image(const fs::path& path, const data::Image& im) {
  const std::string ext = path.extension().string();
  write_bytes(path, ext == ".png" ? data::encode_png(im) : encode_jpeg(im));
}

// torchvision ImageFolder layout: <dir>/train/<class>/ and <dir>/val/<class>/, names
// class_0.. ; even samples are PNG, odd ones JPEG; images of h x w.
inline void write_image_folder(const fs::path& dir, int classes, int train_per_class, int val_per_class, int h = 24,
                               int w = 20) {
  for (int k = 0; k < classes; ++k) {
    const std::string name = "class_" + std::to_string(k);
    for (int i = 0; i < train_per_class + val_per_class; ++i) {
      const bool train = i < train_per_class;
      const fs::path file = dir / (train ? "train" : "val") / name / ("img" + std::to_string(i) + (i % 2 ? ".jpg" : ".png"));
      write_image(file, class_image(k, i, h, w));
    }
  }
}

// TinyImageNet layout with `classes` wnids n0000000k, 64x64 JPEGs.
inline void write_tiny_imagenet(const fs::path& dir, int classes, int train_per_class, int val_per_class) {
  fs::create_directories(dir / "val" / "images");
  std::ofstream wnids(dir / "wnids.txt"), words(dir / "words.txt"), annotations(dir / "val" / "val_annotations.txt");
  words << "n99999999\tunused, other\n";
  int val_index = 0;
  for (int k = classes - 1; k >= 0; --k) {  // wnids.txt is not sorted in the real data set
    char wnid[16];
    std::snprintf(wnid, sizeof wnid, "n%08d", k);
    wnids << wnid << "\n";
    words << wnid << "\tthing " << k << ", other name\n";
    for (int i = 0; i < train_per_class; ++i)
      write_image(dir / "train" / wnid / "images" / (std::string(wnid) + "_" + std::to_string(i) + ".JPEG"),
                  class_image(k, i, 64, 64));
    for (int i = 0; i < val_per_class; ++i, ++val_index) {
      const std::string file = "val_" + std::to_string(val_index) + ".JPEG";
      write_image(dir / "val" / "images" / file, class_image(k, 1000 + i, 64, 64));
      annotations << file << "\t" << wnid << "\t0\t0\t63\t63\n";
    }
  }
}

}  // namespace plugtrain::testing
