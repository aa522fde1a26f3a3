// Folders of JPEG and PNG images: torchvision's ImageFolder layout and TinyImageNet's own.
//
// image-folder: <root>/train/<class>/<image> and <root>/val/<class>/<image> (or test/);
// classes are the sorted folder names under train/. tiny-imagenet: wnids.txt, words.txt
// (class names), train/<wnid>/images/*.JPEG, val/images/* labelled by
// val/val_annotations.txt; classes are the sorted wnids. Images are decoded to RGB, resized
// so the shorter side is `image_size` and centre-cropped to image_size x image_size, and
// either all decoded up front into memory on several threads (the cache) or decoded on
// demand by the loader threads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace plugtrain::data {

struct ImageFile {
  std::filesystem::path path;
  int64_t label = 0;
};

struct ImageList {
  std::vector<ImageFile> train, test;
  std::vector<std::string> class_names;  // the folder names / wnids' words
  std::string test_split;                // the folder the test split came from (val or test)
};

// Throw DataError naming the folder or file: a missing train/ (or val/ and test/), an
// empty class folder, a val class that train does not have, an annotation naming an
// unknown class or a missing image.
ImageList scan_image_folder(const std::filesystem::path& root);
ImageList scan_tiny_imagenet(const std::filesystem::path& root);

struct DecodeSettings {
  int64_t image_size = 64;
  bool in_memory = true;  // decode everything now (false: the loader decodes each epoch)
  int threads = 0;        // decoding threads for the cache (0: every core)
  bool skip_bad = false;  // drop images that cannot be decoded instead of failing
};

struct DecodeReport {
  int64_t decoded = 0;
  int64_t skipped = 0;
  std::string first_skipped;  // "<file>: <reason>" of the first skipped image
  double seconds = 0;
  int threads = 0;
};

// One split as a Dataset (uint8 3 x size x size). With in_memory, decodes every image on
// `threads` threads (and the report says how fast); otherwise the Dataset's decode function
// reads and decodes on demand. Throws DataError naming the first image that cannot be
// decoded (unless skip_bad).
Dataset image_dataset(const std::vector<ImageFile>& files, const std::vector<std::string>& class_names,
                      const DecodeSettings& settings, DecodeReport* report = nullptr);

// Bytes the decoded images of `count` samples of the given size take in memory.
int64_t decoded_bytes(int64_t count, int64_t image_size);

// MemAvailable of this machine (bytes; 0 when unknown).
int64_t available_memory_bytes();

}  // namespace plugtrain::data
