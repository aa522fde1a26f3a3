// The image data sets on files in their real formats (tests/support/image_data.h): CIFAR-10
// and CIFAR-100 from a folder and from the .tar.gz itself, image folders of PNG and JPEG,
// TinyImageNet; the cache, the statistics, and one line naming the file for every kind of
// bad data.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "data/batch_loader.h"
#include "data/load_dataset.h"
#include "plugins/plugin_host.h"
#include "readers/cifar.h"
#include "readers/image_folder.h"
#include "support/data_errors.h"
#include "support/image_data.h"
#include "support/temp_dir.h"

namespace plugtrain::data {
namespace image_datasets_test {

namespace fs = std::filesystem;
using plugtrain::testing::class_colour;
using plugtrain::testing::data_error_of;
using plugtrain::testing::TempDir;

// `tar -czf archive -C parent folder`: the official archives hold one top-level folder.
void make_tar_gz(const fs::path& archive, const fs::path& parent, const std::string& folder) {
  const std::string cmd = "tar -czf '" + archive.string() + "' -C '" + parent.string() + "' '" + folder + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

// Mean colour of sample i, channel c, on the byte scale.
double mean_byte(const Dataset& d, int64_t i, int c) { return d.images[i][c].to(at::kDouble).mean().item<double>(); }

TEST(Cifar, Cifar10FromTheFolderAndFromTheTarGzAreTheSame) {
  TempDir tmp;
  plugtrain::testing::write_cifar10(tmp.path() / "cifar-10-batches-bin", 20, 15);
  make_tar_gz(tmp.path() / "cifar-10-binary.tar.gz", tmp.path(), "cifar-10-batches-bin");
  const DatasetPair folder = load_cifar(tmp.path(), CifarKind::cifar10);  // finds the subfolder
  const DatasetPair archive = load_cifar(tmp.path() / "cifar-10-binary.tar.gz", CifarKind::cifar10);
  for (const DatasetPair* p : {&folder, &archive}) {
    EXPECT_EQ(p->train.images.sizes(), at::IntArrayRef({100, 3, 32, 32}));
    EXPECT_EQ(p->test.images.sizes(), at::IntArrayRef({15, 3, 32, 32}));
    EXPECT_EQ(p->train.images.scalar_type(), at::kByte);
    EXPECT_EQ(p->train.num_classes, 10);
    EXPECT_EQ(p->train.class_names.at(0), "airplane");
    EXPECT_EQ(p->train.class_names.at(9), "truck");
    // Batch 1's first record is sample 20 of the generator: class 0; its red plane first.
    EXPECT_EQ(p->train.labels[0].item<int64_t>(), 0);
    EXPECT_NEAR(mean_byte(p->train, 0, 1), class_colour(0, 1), 3.0);
    EXPECT_EQ(p->train.labels[23].item<int64_t>(), 3);
    EXPECT_NEAR(mean_byte(p->train, 23, 2), class_colour(3, 2), 3.0);
  }
  EXPECT_TRUE(at::equal(folder.train.images, archive.train.images));
  EXPECT_TRUE(at::equal(folder.test.labels, archive.test.labels));
}

TEST(Cifar, Cifar100FineOrCoarseLabels) {
  TempDir tmp;
  plugtrain::testing::write_cifar100(tmp.path() / "cifar-100-binary", 300, 50);
  make_tar_gz(tmp.path() / "cifar-100-binary.tar.gz", tmp.path(), "cifar-100-binary");
  const DatasetPair fine = load_cifar(tmp.path() / "cifar-100-binary.tar.gz", CifarKind::cifar100, CifarLabels::fine);
  const DatasetPair coarse = load_cifar(tmp.path() / "cifar-100-binary", CifarKind::cifar100, CifarLabels::coarse);
  EXPECT_EQ(fine.train.num_classes, 100);
  EXPECT_EQ(coarse.train.num_classes, 20);
  EXPECT_EQ(fine.train.size(), 300);
  EXPECT_EQ(fine.test.size(), 50);
  EXPECT_EQ(fine.train.labels[57].item<int64_t>(), 57);
  EXPECT_EQ(coarse.train.labels[57].item<int64_t>(), 11);
  EXPECT_EQ(fine.train.class_names.at(57), "fine57");
  EXPECT_EQ(coarse.train.class_names.at(11), "coarse11");
  EXPECT_TRUE(at::equal(fine.train.images, coarse.train.images));
}

TEST(Cifar, BadFilesGetOneLineNamingTheFile) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "c10";
  plugtrain::testing::write_cifar10(dir, 10, 10);
  fs::remove(dir / "data_batch_3.bin");
  EXPECT_EQ(data_error_of([&] { load_cifar(dir, CifarKind::cifar10); }),
            (dir / "data_batch_3.bin").string() + ": missing (expected the CIFAR binary version's data_batch_3.bin)");

  plugtrain::testing::write_cifar10(dir, 10, 10);
  std::ofstream(dir / "data_batch_2.bin", std::ios::app) << "xyz";  // 3 bytes too many
  EXPECT_EQ(data_error_of([&] { load_cifar(dir, CifarKind::cifar10); }),
            (dir / "data_batch_2.bin").string() + ": 30733 bytes is not a whole number of 3073-byte records");

  plugtrain::testing::write_cifar10(dir, 10, 10);
  plugtrain::testing::write_bytes(dir / "data_batch_4.bin", plugtrain::testing::cifar_records(9, 10, false));
  EXPECT_EQ(data_error_of([&] { load_cifar(dir, CifarKind::cifar10); }),
            (dir / "data_batch_4.bin").string() +
                ": 9 records, but data_batch_1.bin has 10 (the batches of one split have equal lengths)");

  plugtrain::testing::write_cifar10(dir, 10, 10);
  auto records = plugtrain::testing::cifar_records(10, 10, false);
  records[3073 * 6] = 10;  // record 6's label
  plugtrain::testing::write_bytes(dir / "test_batch.bin", records);
  EXPECT_EQ(data_error_of([&] { load_cifar(dir, CifarKind::cifar10); }),
            (dir / "test_batch.bin").string() + ": record 6 has label 10, outside the 10 classes");

  // An archive cut short, and a file that is no archive at all.
  plugtrain::testing::write_cifar10(dir, 10, 10);
  make_tar_gz(tmp.path() / "c10.tar.gz", tmp.path(), "c10");
  const auto size = fs::file_size(tmp.path() / "c10.tar.gz");
  fs::resize_file(tmp.path() / "c10.tar.gz", size / 2);
  const std::string cut = data_error_of([&] { load_cifar(tmp.path() / "c10.tar.gz", CifarKind::cifar10); });
  EXPECT_EQ(cut.rfind((tmp.path() / "c10.tar.gz").string() + ": ", 0), 0u) << cut;
  EXPECT_EQ(cut.find('\n'), std::string::npos) << cut;
  std::ofstream(tmp.path() / "notes.txt") << "hello";
  EXPECT_EQ(data_error_of([&] { load_cifar(tmp.path() / "notes.txt", CifarKind::cifar10); }),
            (tmp.path() / "notes.txt").string() +
                ": not a folder and not a .tar.gz (or .tar) archive of the CIFAR binary version");
}

TEST(ImageFolder, PngAndJpegClassesDecodeToTheirColours) {
  TempDir tmp;
  plugtrain::testing::write_image_folder(tmp.path(), 3, 4, 2, 24, 20);
  const ImageList list = scan_image_folder(tmp.path());
  EXPECT_EQ(list.class_names, (std::vector<std::string>{"class_0", "class_1", "class_2"}));
  EXPECT_EQ(list.train.size(), 12u);
  EXPECT_EQ(list.test.size(), 6u);
  EXPECT_EQ(list.test_split, "val");
  DecodeSettings settings;
  settings.image_size = 16;
  settings.threads = 2;
  DecodeReport report;
  const Dataset train = image_dataset(list.train, list.class_names, settings, &report);
  EXPECT_EQ(report.decoded, 12);
  EXPECT_EQ(train.images.sizes(), at::IntArrayRef({12, 3, 16, 16}));
  for (int64_t i = 0; i < 12; ++i) {
    const int64_t k = train.labels[i].item<int64_t>();
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(mean_byte(train, i, c), class_colour(k, c), 4.0) << i << " " << c;
  }
  // Decoded on demand: the same pixels.
  settings.in_memory = false;
  const Dataset lazy = image_dataset(list.train, list.class_names, settings);
  EXPECT_FALSE(lazy.images.defined());
  std::vector<uint8_t> px(3 * 16 * 16);
  lazy.decode(5, px.data());
  EXPECT_TRUE(at::equal(at::from_blob(px.data(), {3, 16, 16}, at::kByte), train.images[5]));
}

TEST(ImageFolder, BadFoldersAndImagesAreNamed) {
  TempDir tmp;
  plugtrain::testing::write_image_folder(tmp.path(), 2, 2, 1);
  fs::create_directories(tmp.path() / "train" / "empty_class");
  EXPECT_EQ(data_error_of([&] { scan_image_folder(tmp.path()); }),
            (tmp.path() / "train" / "empty_class").string() + ": empty class folder (no .jpg, .jpeg or .png images)");
  fs::remove(tmp.path() / "train" / "empty_class");
  fs::create_directories(tmp.path() / "val" / "zebra");
  EXPECT_EQ(data_error_of([&] { scan_image_folder(tmp.path()); }),
            (tmp.path() / "val" / "zebra").string() + ": class 'zebra' is not a class of train/");
  fs::remove(tmp.path() / "val" / "zebra");
  EXPECT_EQ(data_error_of([&] { scan_image_folder(tmp.path() / "nowhere"); }),
            (tmp.path() / "nowhere").string() +
                ": no train/ folder (expected <path>/train/<class>/<image> and val/ or test/)");

  // An image that cannot be decoded stops the load, naming it; skip_bad counts it instead.
  const fs::path broken = tmp.path() / "train" / "class_1" / "img9.png";
  std::ofstream(broken) << "not a png";
  const ImageList list = scan_image_folder(tmp.path());
  DecodeSettings settings;
  settings.image_size = 8;
  const std::string msg = data_error_of([&] { image_dataset(list.train, list.class_names, settings); });
  EXPECT_EQ(msg.rfind(broken.string() + ": ", 0), 0u) << msg;
  EXPECT_NE(msg.find("(data.skip_bad = true skips such images)"), std::string::npos) << msg;
  settings.skip_bad = true;
  DecodeReport report;
  const Dataset kept = image_dataset(list.train, list.class_names, settings, &report);
  EXPECT_EQ(report.skipped, 1);
  EXPECT_EQ(kept.size(), 4);
  EXPECT_EQ(report.first_skipped.rfind(broken.string(), 0), 0u);
}

TEST(TinyImageNet, LayoutWithSortedWnidsWordsAndValAnnotations) {
  TempDir tmp;
  plugtrain::testing::write_tiny_imagenet(tmp.path(), 4, 3, 2);
  const ImageList list = scan_tiny_imagenet(tmp.path());
  EXPECT_EQ(list.class_names, (std::vector<std::string>{"thing 0", "thing 1", "thing 2", "thing 3"}));
  EXPECT_EQ(list.train.size(), 12u);
  EXPECT_EQ(list.test.size(), 8u);
  DecodeSettings settings;
  settings.image_size = 64;
  const Dataset val = image_dataset(list.test, list.class_names, settings);
  for (int64_t i = 0; i < val.size(); ++i) {
    const int64_t k = val.labels[i].item<int64_t>();
    EXPECT_NEAR(mean_byte(val, i, 0), class_colour(k, 0), 4.0) << i;
  }

  std::ofstream(tmp.path() / "val" / "val_annotations.txt", std::ios::app) << "val_0.JPEG\tn12345678\t0\t0\t1\t1\n";
  EXPECT_EQ(data_error_of([&] { scan_tiny_imagenet(tmp.path()); }),
            (tmp.path() / "val" / "val_annotations.txt").string() + ":9: class 'n12345678' is not in wnids.txt");
}

// A data set of the bundled datasets plugin, found as a run finds it (beside the executable).
const RegisteredDataset& bundled_dataset(const std::string& name) {
  static const PluginHost host{SearchOptions{}};
  const RegisteredDataset* d = host.datasets().find(name);
  if (!d) throw std::runtime_error("the bundled datasets plugin has no data set '" + name + "'");
  return *d;
}

DataOptions options_for(const RegisteredDataset& d) {
  DataOptions o;
  o.dataset = &d.spec;
  o.plugin = d.plugin;
  std::map<std::string, OptionValue> defaults;
  for (const auto& option : d.spec.options) defaults[option.name] = option.default_value;
  o.dataset_options = Options(defaults);
  return o;
}

TEST(LoadDataset, TheBundledReadersComeFromTheDatasetsPlugin) {
  for (const char* name :
       {"fashion-mnist", "mnist", "cifar10", "cifar100", "image-folder", "tiny-imagenet", "synthetic"})
    EXPECT_EQ(bundled_dataset(name).plugin, "datasets") << name;
  TempDir tmp;
  plugtrain::testing::write_cifar10(tmp.path(), 20, 10);
  DataOptions o = options_for(bundled_dataset("cifar10"));
  o.path = tmp.path();
  const LoadedData read = load_dataset(o);
  const DatasetPair direct = load_cifar(tmp.path(), CifarKind::cifar10);
  EXPECT_TRUE(read.data.train.images.equal(direct.train.images));
  EXPECT_TRUE(read.data.test.labels.equal(direct.test.labels));
  EXPECT_EQ(read.source, "cifar10 from " + tmp.path().string());
  // A reader's errors name the data set and its plugin, then the file.
  o.path = tmp.path() / "missing";
  EXPECT_EQ(data_error_of([&] { load_dataset(o); }).rfind("data set 'cifar10' (plugin 'datasets'): ", 0), 0u);
}

TEST(LoadDataset, AnImageFolderTooLargeToCacheIsDecodedOnDemandThroughThePlugin) {
  TempDir tmp;
  plugtrain::testing::write_image_folder(tmp.path(), 3, 4, 2);
  DataOptions o = options_for(bundled_dataset("image-folder"));
  o.path = tmp.path();
  o.image_size = 16;
  o.cache = ImageCache::none;
  const LoadedData lazy = load_dataset(o);
  EXPECT_FALSE(lazy.cached);
  EXPECT_FALSE(lazy.data.train.images.defined());
  ASSERT_TRUE(bool(lazy.data.train.decode));
  o.cache = ImageCache::memory;
  const LoadedData cached = load_dataset(o);
  ASSERT_TRUE(cached.cached);
  EXPECT_EQ(lazy.test_split, "val");
  // The sample the loader decodes on demand is the one the cache holds.
  at::Tensor pixels = at::empty({3, 16, 16}, at::TensorOptions().dtype(at::kByte));
  lazy.data.train.decode(1, pixels.data_ptr<uint8_t>());
  EXPECT_TRUE(pixels.equal(cached.data.train.images[1]));
  EXPECT_NE(cached.notes.front().find("decoded "), std::string::npos) << cached.notes.front();
}

TEST(LoadDataset, NormalisationFromTheTrainingSetGivenOrNone) {
  TempDir tmp;
  plugtrain::testing::write_cifar10(tmp.path(), 20, 10);
  DataOptions o = options_for(bundled_dataset("cifar10"));
  o.path = tmp.path();
  const LoadedData stats = load_dataset(o);
  const at::Tensor unit = stats.data.train.images.to(at::kDouble).div(255.0);
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(stats.data.train.normalization.mean[size_t(c)], unit.select(1, c).mean().item<double>(), 1e-9);
    EXPECT_NEAR(stats.data.train.normalization.std[size_t(c)], unit.select(1, c).std(false).item<double>(), 1e-9);
  }
  EXPECT_NE(stats.notes.back().find("normalize: training set mean "), std::string::npos) << stats.notes.back();
  // A batch from the loader has (per channel) mean 0 and std 1 over the whole training set.
  BatchLoader all(stats.data.train, 100, false, AugmentOptions{}, LoaderConfig{}, at::kCPU, 0);
  const at::Tensor x = all.next()->inputs;
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(x.select(1, c).mean().item<double>(), 0.0, 1e-4);
    EXPECT_NEAR(x.select(1, c).std(false).item<double>(), 1.0, 1e-4);
  }
  o.mean = {0.5, 0.5, 0.5};
  o.std = {0.25, 0.25, 0.25};
  EXPECT_EQ(load_dataset(o).data.test.normalization.std, o.std);
  o.mean = {0.5};
  EXPECT_EQ(data_error_of([&] { load_dataset(o); }),
            "data.mean and data.std need 3 values each (one per channel), got 1 and 3");
  o.mean.clear();
  o.std.clear();
  o.normalize = Normalize::none;
  EXPECT_EQ(load_dataset(o).data.train.normalization.mean, std::vector<double>(3, 0.0));
}

}  // namespace image_datasets_test
}  // namespace plugtrain::data
