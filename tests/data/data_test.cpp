// The data layer: IDX reading (plain, gzip, broken files), the real Fashion-MNIST when
// installed, synthetic data, label noise, augmentation and the batch loader.
#include <zlib.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include "data/augment.h"
#include "data/batch_loader.h"
#include "data/data_error.h"
#include "data/dataset.h"
#include "readers/idx_dataset.h"
#include "readers/idx_reader.h"
#include "readers/synthetic.h"
#include "support/data_errors.h"
#include "support/fashion_mnist.h"
#include "support/temp_dir.h"

namespace plugtrain::data {
namespace data_test {

namespace fs = std::filesystem;
using Bytes = std::vector<unsigned char>;
using plugtrain::testing::data_error_of;
using plugtrain::testing::TempDir;

const fs::path kFashionMnist = testing::fashion_mnist_dir();

void put_be32(Bytes& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<unsigned char>(v >> shift));
}

// An unsigned-byte IDX file's bytes: header for dims, then data.
Bytes idx_bytes(const std::vector<uint32_t>& dims, const Bytes& data, int type = 0x08) {
  Bytes out{0, 0, static_cast<unsigned char>(type), static_cast<unsigned char>(dims.size())};
  for (auto d : dims) put_be32(out, d);
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

void write_plain(const fs::path& path, const Bytes& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

void write_gzip(const fs::path& path, const Bytes& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

Bytes iota_bytes(size_t n) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<unsigned char>(i * 7 % 256);
  return b;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Writes a small MNIST-style folder: n_train/n_test images of h x w, labels i % classes.
void write_mnist_folder(const fs::path& dir, int64_t n_train, int64_t n_test, int64_t h, int64_t w, int classes,
                        bool gzip, int64_t n_train_labels = -1) {
  if (n_train_labels < 0) n_train_labels = n_train;
  auto labels = [&](int64_t n) {
    Bytes b(n);
    for (int64_t i = 0; i < n; ++i) b[i] = static_cast<unsigned char>(i % classes);
    return b;
  };
  auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
  auto write = [&](const std::string& name, const Bytes& bytes) {
    if (gzip)
      write_gzip(dir / (name + ".gz"), bytes);
    else
      write_plain(dir / name, bytes);
  };
  write("train-images-idx3-ubyte", idx_bytes({u(n_train), u(h), u(w)}, iota_bytes(n_train * h * w)));
  write("train-labels-idx1-ubyte", idx_bytes({u(n_train_labels)}, labels(n_train_labels)));
  write("t10k-images-idx3-ubyte", idx_bytes({u(n_test), u(h), u(w)}, iota_bytes(n_test * h * w)));
  write("t10k-labels-idx1-ubyte", idx_bytes({u(n_test)}, labels(n_test)));
}

// ---------------------------------------------------------------- IDX reader

TEST(IdxReader, ReadsPlainAndGzipIdentically) {
  TempDir tmp;
  const Bytes data = iota_bytes(2 * 3 * 4);
  const Bytes file = idx_bytes({2, 3, 4}, data);
  write_plain(tmp.path() / "plain", file);
  write_gzip(tmp.path() / "packed.gz", file);

  for (const char* name : {"plain", "packed.gz"}) {
    at::Tensor t = read_idx(tmp.path() / name);
    EXPECT_EQ(t.scalar_type(), at::kByte) << name;
    EXPECT_EQ(t.sizes(), at::IntArrayRef({2, 3, 4})) << name;
    EXPECT_EQ(t[1][2][3].item<int>(), data[23]) << name;
    EXPECT_TRUE(at::equal(t.flatten(), at::tensor(std::vector<uint8_t>(data.begin(), data.end()))));
  }
}

TEST(IdxReader, MissingFileNamesIt) {
  TempDir tmp;
  const fs::path p = tmp.path() / "nothing-here";
  const std::string msg = data_error_of([&] { read_idx(p); });
  EXPECT_TRUE(contains(msg, p.string())) << msg;
}

TEST(IdxReader, WrongMagicNamesFileAndMagic) {
  TempDir tmp;
  const fs::path p = tmp.path() / "not-idx";
  write_plain(p, Bytes{'P', 'K', 3, 4, 0, 0, 0, 0});
  const std::string msg = data_error_of([&] { read_idx(p); });
  EXPECT_EQ(msg, p.string() + ": not an IDX file (magic 0x504B0304)");
}

TEST(IdxReader, UnsupportedElementType) {
  TempDir tmp;
  const fs::path p = tmp.path() / "floats";
  write_plain(p, idx_bytes({2}, Bytes(8, 0), 0x0D));
  const std::string msg = data_error_of([&] { read_idx(p); });
  EXPECT_TRUE(contains(msg, p.string() + ": unsupported IDX element type 0x0D")) << msg;
}

TEST(IdxReader, TruncatedDataSaysHowMuchIsMissing) {
  TempDir tmp;
  const Bytes file = idx_bytes({10, 5}, iota_bytes(37));  // 50 promised
  write_plain(tmp.path() / "short", file);
  write_gzip(tmp.path() / "short.gz", file);
  for (const char* name : {"short", "short.gz"}) {
    const fs::path p = tmp.path() / name;
    const std::string msg = data_error_of([&] { read_idx(p); });
    EXPECT_EQ(msg, p.string() + ": truncated: header promises 50 bytes of data, file has 37");
  }
}

// Found by scripts/fuzz idx: headers that promise more than a file can hold are refused before
// anything is allocated, and dims whose strides overflow (one of them 0) are refused too.
TEST(IdxReader, AHeaderPromisingExabytesAllocatesNothing) {
  TempDir tmp;
  const fs::path huge = tmp.path() / "huge";
  write_plain(huge, Bytes{0, 0, 8, 3, 0, 0x10, 0, 0, 0, 0x10, 0, 0, 0, 0x10, 0, 0, 1, 2, 3});  // 2^60 bytes
  EXPECT_TRUE(contains(data_error_of([&] { read_idx(huge); }), huge.string() + ": truncated: header promises"));
  const fs::path zero = tmp.path() / "zero";
  write_plain(zero, Bytes{0, 0, 8, 3, 0, 0, 0, 0, 0xfd, 0xff, 0xfe, 0xfd, 0xf3, 0xf2, 0xfd, 0xf7});
  EXPECT_TRUE(contains(data_error_of([&] { read_idx(zero); }), zero.string() + ": not an IDX file (dims overflow)"));
}

TEST(IdxReader, TruncatedHeader) {
  TempDir tmp;
  const fs::path p = tmp.path() / "header-only";
  write_plain(p, Bytes{0, 0, 8, 3, 0, 0, 0, 1});  // 3 dims promised, 1 given
  const std::string msg = data_error_of([&] { read_idx(p); });
  EXPECT_TRUE(contains(msg, p.string() + ": truncated")) << msg;
}

// ---------------------------------------------------------------- IDX data set folders

TEST(IdxDataset, LoadsSmallFolderPlainOrGzip) {
  for (bool gzip : {false, true}) {
    TempDir tmp;
    write_mnist_folder(tmp.path(), 12, 5, 4, 3, 4, gzip);
    DatasetPair p = load_idx_dataset(tmp.path());
    EXPECT_EQ(p.train.images.sizes(), at::IntArrayRef({12, 1, 4, 3}));
    EXPECT_EQ(p.test.images.sizes(), at::IntArrayRef({5, 1, 4, 3}));
    EXPECT_EQ(p.train.images.scalar_type(), at::kByte);  // normalised by the loader
    EXPECT_EQ(p.train.labels.scalar_type(), at::kLong);
    EXPECT_EQ(p.train.num_classes, 4);
    EXPECT_EQ(p.train.sample_shape, (std::vector<int64_t>{1, 4, 3}));
    EXPECT_EQ(p.train.images[0][0][0][1].item<int64_t>(), 7);  // the file's bytes
    // The training set's own statistics, which the test set is normalised with too.
    const at::Tensor unit = p.train.images.to(at::kDouble) / 255.0;
    ASSERT_EQ(p.train.normalization.mean.size(), 1u);
    EXPECT_NEAR(p.train.normalization.mean[0], unit.mean().item<double>(), 1e-9);
    EXPECT_NEAR(p.train.normalization.std[0], unit.std(/*unbiased=*/false).item<double>(), 1e-9);
    EXPECT_EQ(p.test.normalization.mean, p.train.normalization.mean);
    // The loader gives (7/255 - mean)/std for that byte.
    BatchLoader loader(p.train, 12, false, AugmentOptions{}, LoaderConfig{}, at::kCPU, 0);
    const auto b = loader.next();
    EXPECT_NEAR(b->inputs[0][0][0][1].item<double>(),
                (7 / 255.0 - p.train.normalization.mean[0]) / p.train.normalization.std[0], 1e-5);
    EXPECT_NEAR(b->inputs.mean().item<double>(), 0.0, 1e-5);
    EXPECT_NEAR(b->inputs.std(/*unbiased=*/false).item<double>(), 1.0, 1e-4);
    EXPECT_EQ(p.train.labels[5].item<int64_t>(), 1);
  }
}

std::string slurp_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(IdxDataset, ALabelOutsideTheClassesNamesFileSampleAndLabel) {
  TempDir tmp;
  write_mnist_folder(tmp.path(), 12, 5, 4, 3, 4, false);
  // Fashion-MNIST has 10 classes: a label of 10 or more is damage, not an eleventh class.
  std::string labels = slurp_bytes(tmp.path() / "train-labels-idx1-ubyte");
  labels[8 + 7] = 12;  // after the 8-byte header: sample 7
  std::ofstream(tmp.path() / "train-labels-idx1-ubyte", std::ios::binary | std::ios::trunc) << labels;
  const std::string msg = data_error_of([&] { load_idx_dataset(tmp.path(), 10); });
  EXPECT_EQ(msg, (tmp.path() / "train-labels-idx1-ubyte").string() +
                     ": label 12 of sample 7 is outside the data set's 10 classes (0..9; 1 such labels)");
  EXPECT_EQ(load_idx_dataset(tmp.path(), 0).train.num_classes, 13) << "without a class count, the labels decide";
}

TEST(IdxDataset, MissingFileNamesFolderAndFile) {
  TempDir tmp;
  write_mnist_folder(tmp.path(), 4, 2, 2, 2, 2, false);
  fs::remove(tmp.path() / "t10k-labels-idx1-ubyte");
  const std::string msg = data_error_of([&] { load_idx_dataset(tmp.path()); });
  EXPECT_TRUE(contains(msg, tmp.path().string())) << msg;
  EXPECT_TRUE(contains(msg, "t10k-labels-idx1-ubyte")) << msg;
}

TEST(IdxDataset, CountMismatchNamesBothFiles) {
  TempDir tmp;
  write_mnist_folder(tmp.path(), 6, 2, 2, 2, 2, false, /*n_train_labels=*/5);
  const std::string msg = data_error_of([&] { load_idx_dataset(tmp.path()); });
  EXPECT_EQ(msg, (tmp.path() / "train-images-idx3-ubyte").string() + " has 6 images but " +
                     (tmp.path() / "train-labels-idx1-ubyte").string() + " has 5 labels");
}

TEST(IdxDataset, RealFashionMnist) {
  if (!fs::exists(kFashionMnist)) GTEST_SKIP() << kFashionMnist << " not installed";
  const auto t0 = std::chrono::steady_clock::now();
  DatasetPair p = load_idx_dataset(kFashionMnist);
  const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[ timing   ] load_idx_dataset(%s): %.0f ms\n", kFashionMnist.c_str(), ms);
  RecordProperty("load_ms", static_cast<int>(ms));

  EXPECT_EQ(p.train.images.sizes(), at::IntArrayRef({60000, 1, 28, 28}));
  EXPECT_EQ(p.test.images.sizes(), at::IntArrayRef({10000, 1, 28, 28}));
  EXPECT_EQ(p.train.labels.size(0), 60000);
  EXPECT_EQ(p.test.labels.size(0), 10000);
  EXPECT_EQ(p.train.num_classes, 10);
  EXPECT_EQ(p.train.labels[0].item<int64_t>(), 9);  // the first Fashion-MNIST sample is an ankle boot
  EXPECT_NEAR(p.train.normalization.mean.at(0), 0.2860, 1e-3);
  EXPECT_NEAR(p.train.normalization.std.at(0), 0.3530, 1e-3);
}

// ---------------------------------------------------------------- synthetic, noise, subset

TEST(Synthetic, SameSeedSameTensorsOtherSeedOther) {
  DatasetPair a = make_synthetic({3, 8, 8}, 5, 200, 50, 42);
  DatasetPair b = make_synthetic({3, 8, 8}, 5, 200, 50, 42);
  DatasetPair c = make_synthetic({3, 8, 8}, 5, 200, 50, 43);
  EXPECT_EQ(a.train.images.sizes(), at::IntArrayRef({200, 3, 8, 8}));
  EXPECT_EQ(a.test.images.sizes(), at::IntArrayRef({50, 3, 8, 8}));
  EXPECT_EQ(a.train.num_classes, 5);
  EXPECT_EQ(a.train.sample_shape, (std::vector<int64_t>{3, 8, 8}));
  EXPECT_TRUE(at::equal(a.train.images, b.train.images));
  EXPECT_TRUE(at::equal(a.train.labels, b.train.labels));
  EXPECT_TRUE(at::equal(a.test.images, b.test.images));
  EXPECT_FALSE(at::equal(a.train.images, c.train.images));
  EXPECT_FALSE(at::equal(a.train.labels, c.train.labels));
}

TEST(Synthetic, IsLearnableByNearestClassMean) {
  DatasetPair p = make_synthetic({1, 8, 8}, 4, 400, 200, 7);
  // Class means from the training set; classify the test set by the nearest mean.
  at::Tensor x = p.train.images.flatten(1);
  std::vector<at::Tensor> means;
  for (int64_t k = 0; k < 4; ++k) means.push_back(x.index({p.train.labels == k}).mean(0));
  at::Tensor m = at::stack(means);
  at::Tensor pred = at::cdist(p.test.images.flatten(1), m).argmin(1);
  const double acc = pred.eq(p.test.labels).to(at::kDouble).mean().item<double>();
  EXPECT_GT(acc, 0.9);
}

TEST(LabelNoise, ChangesExactlyRoundPNLabelsEachToAnotherClass) {
  DatasetPair p = make_synthetic({1, 4, 4}, 10, 1001, 10, 1);
  const at::Tensor before = p.train.labels.clone();
  Dataset noisy = p.train;
  const int64_t changed = apply_label_noise(noisy, 0.25, 99);
  EXPECT_EQ(changed, std::llround(0.25 * 1001));
  EXPECT_EQ(noisy.labels.ne(before).sum().item<int64_t>(), changed);  // each chosen one differs
  EXPECT_TRUE(at::equal(p.train.labels, before));                     // the original is untouched
  EXPECT_LT(noisy.labels.max().item<int64_t>(), 10);
  EXPECT_GE(noisy.labels.min().item<int64_t>(), 0);

  Dataset again = p.train;
  apply_label_noise(again, 0.25, 99);
  EXPECT_TRUE(at::equal(again.labels, noisy.labels));
  Dataset none = p.train;
  EXPECT_EQ(apply_label_noise(none, 0.0, 99), 0);
  Dataset all = p.train;
  EXPECT_EQ(apply_label_noise(all, 1.0, 99), 1001);
  EXPECT_EQ(all.labels.ne(before).sum().item<int64_t>(), 1001);
}

TEST(Subset, FirstNOrAll) {
  DatasetPair p = make_synthetic({1, 2, 2}, 3, 20, 5, 3);
  Dataset s = subset(p.train, 7);
  EXPECT_EQ(s.size(), 7);
  EXPECT_EQ(s.images.size(0), 7);
  EXPECT_TRUE(at::equal(s.labels, p.train.labels.narrow(0, 0, 7)));
  EXPECT_EQ(subset(p.train, 0).size(), 20);
  EXPECT_EQ(subset(p.train, -1).size(), 20);
  EXPECT_EQ(subset(p.train, 20).size(), 20);
  EXPECT_EQ(subset(p.train, 500).size(), 20);
}

// ---------------------------------------------------------------- batch loader

// A data set whose label is the sample's index, so targets show which samples a batch holds.
Dataset index_dataset(int64_t n) {
  Dataset d;
  d.labels = at::arange(n, at::kLong);
  d.images = d.labels.to(at::kFloat).view({n, 1, 1, 1}).expand({n, 1, 2, 2}).contiguous();
  d.num_classes = n;
  d.sample_shape = {1, 2, 2};
  return d;
}

LoaderConfig config_with_prefetch(int depth) {
  LoaderConfig c;
  c.prefetch_depth = depth;
  return c;
}

std::vector<at::Tensor> epoch_targets(BatchLoader& loader, int64_t epoch) {
  loader.start_epoch(epoch);
  std::vector<at::Tensor> out;
  while (auto b = loader.next()) out.push_back(b->targets);
  return out;
}

at::Tensor concat(const std::vector<at::Tensor>& parts) { return at::cat(parts); }

TEST(BatchLoader, VisitsEverySampleOncePerEpochWithPartialLastBatch) {
  for (int depth : {0, 1, 3}) {
    Dataset d = index_dataset(103);
    BatchLoader loader(d, 10, true, AugmentOptions{}, config_with_prefetch(depth), at::kCPU, 1);
    EXPECT_EQ(loader.batches_per_epoch(), 11);
    for (int64_t epoch = 0; epoch < 2; ++epoch) {
      auto batches = epoch_targets(loader, epoch);
      ASSERT_EQ(batches.size(), 11u) << "depth " << depth;
      for (size_t i = 0; i + 1 < batches.size(); ++i) EXPECT_EQ(batches[i].size(0), 10);
      EXPECT_EQ(batches.back().size(0), 3);
      at::Tensor all = concat(batches);
      EXPECT_TRUE(at::equal(std::get<0>(all.sort()), at::arange(103, at::kLong))) << "depth " << depth;
      EXPECT_FALSE(loader.next().has_value());  // stays over
    }
  }
}

TEST(BatchLoader, InputsMatchTargets) {
  Dataset d = index_dataset(50);
  BatchLoader loader(d, 8, true, AugmentOptions{}, config_with_prefetch(2), at::kCPU, 4);
  loader.start_epoch(0);
  while (auto b = loader.next()) {
    EXPECT_EQ(b->inputs.sizes(), at::IntArrayRef({b->targets.size(0), 1, 2, 2}));
    EXPECT_TRUE(at::equal(b->inputs.select(1, 0).select(1, 0).select(1, 0), b->targets.to(at::kFloat)));
  }
}

TEST(BatchLoader, SameSeedSameOrderOtherEpochOtherOrder) {
  Dataset d = index_dataset(64);
  BatchLoader a(d, 16, true, AugmentOptions{}, config_with_prefetch(0), at::kCPU, 123);
  BatchLoader b(d, 16, true, AugmentOptions{}, config_with_prefetch(0), at::kCPU, 123);
  BatchLoader c(d, 16, true, AugmentOptions{}, config_with_prefetch(0), at::kCPU, 124);
  const at::Tensor a0 = concat(epoch_targets(a, 0));
  EXPECT_TRUE(at::equal(a0, concat(epoch_targets(b, 0))));
  EXPECT_FALSE(at::equal(a0, concat(epoch_targets(a, 1))));
  EXPECT_FALSE(at::equal(a0, concat(epoch_targets(c, 2))));  // seed 124 epoch 2 != seed 123 epoch 0
  EXPECT_TRUE(at::equal(a0, concat(epoch_targets(a, 0))));   // epoch 0 again: the same order
}

TEST(BatchLoader, NoShuffleKeepsDatasetOrder) {
  Dataset d = index_dataset(25);
  BatchLoader loader(d, 10, false, AugmentOptions{}, config_with_prefetch(1), at::kCPU, 9);
  EXPECT_TRUE(at::equal(concat(epoch_targets(loader, 3)), at::arange(25, at::kLong)));
}

TEST(BatchLoader, PrefetchOnOrOffGivesIdenticalBatches) {
  DatasetPair p = make_synthetic({3, 8, 8}, 5, 150, 10, 8);
  AugmentOptions aug;
  aug.order = {Augmentation::random_crop, Augmentation::horizontal_flip};
  aug.crop_padding = 2;
  BatchLoader off(p.train, 32, true, aug, config_with_prefetch(0), at::kCPU, 77);
  BatchLoader on(p.train, 32, true, aug, config_with_prefetch(2), at::kCPU, 77);
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    off.start_epoch(epoch);
    on.start_epoch(epoch);
    int64_t count = 0;
    for (;;) {
      auto x = off.next();
      auto y = on.next();
      ASSERT_EQ(x.has_value(), y.has_value());
      if (!x) break;
      EXPECT_TRUE(at::equal(x->inputs, y->inputs)) << "epoch " << epoch << " batch " << count;
      EXPECT_TRUE(at::equal(x->targets, y->targets));
      ++count;
    }
    EXPECT_EQ(count, 5);
  }
}

TEST(BatchLoader, AbandonedEpochsAndEarlyDestructionDoNotHang) {
  Dataset d = index_dataset(1000);
  for (int round = 0; round < 20; ++round) {
    AugmentOptions aug;
    aug.order = {Augmentation::random_crop, Augmentation::horizontal_flip};
    BatchLoader loader(d, 7, true, aug, config_with_prefetch(3), at::kCPU, round);
    loader.start_epoch(0);
    loader.next();
    loader.start_epoch(1);  // abandons epoch 0 with batches still queued
    auto b = loader.next();
    ASSERT_TRUE(b.has_value());
    if (round % 2) loader.start_epoch(2);  // destroyed with a running producer
  }
  // next() without start_epoch starts epoch 0.
  BatchLoader lazy(d, 500, true, AugmentOptions{}, config_with_prefetch(1), at::kCPU, 0);
  BatchLoader eager(d, 500, true, AugmentOptions{}, config_with_prefetch(1), at::kCPU, 0);
  eager.start_epoch(0);
  EXPECT_TRUE(at::equal(lazy.next()->targets, eager.next()->targets));
}

TEST(BatchLoader, WorkerErrorIsRethrownInNextAfterTheBatchesBeforeIt) {
  // Sample 9 cannot be decoded: batches 0 and 1 arrive, batch 2 (samples 8..9) throws.
  Dataset d;
  d.labels = at::arange(10, at::kLong);
  d.decode = [](int64_t i, uint8_t* out) {
    if (i == 9) throw DataError("img9.png: cannot decode PNG");
    out[0] = uint8_t(i);
  };
  d.num_classes = 10;
  d.sample_shape = {1, 1, 1};
  d.normalization = {{0.0}, {1.0}};
  for (int workers : {0, 1, 3}) {
    LoaderConfig config = config_with_prefetch(workers ? 2 : 0);
    config.workers = workers;
    BatchLoader loader(d, 4, false, AugmentOptions{}, config, at::kCPU, 0);
    loader.start_epoch(0);
    ASSERT_TRUE(loader.next().has_value());
    const auto second = loader.next();
    ASSERT_TRUE(second.has_value());
    EXPECT_FLOAT_EQ(second->inputs[3].item<float>(), 7 / 255.0f);
    const std::string msg = data_error_of([&] { loader.next(); });
    EXPECT_EQ(msg, "img9.png: cannot decode PNG") << "workers " << workers;
    EXPECT_FALSE(loader.next().has_value()) << "the failed epoch is over";
  }
}

TEST(BatchLoader, AnyNumberOfWorkersGivesTheSameAugmentedBatches) {
  DatasetPair p = make_synthetic({3, 8, 8}, 5, 150, 10, 8);
  AugmentOptions aug;
  aug.order = {Augmentation::random_crop, Augmentation::horizontal_flip, Augmentation::random_erasing};
  auto epoch_inputs = [&](int workers, int prefetch) {
    LoaderConfig config = config_with_prefetch(prefetch);
    config.workers = workers;
    BatchLoader loader(p.train, 16, true, aug, config, at::kCPU, 5);
    loader.start_epoch(1);
    std::vector<at::Tensor> out;
    while (auto b = loader.next()) out.push_back(b->inputs);
    return at::cat(out);
  };
  const at::Tensor serial = epoch_inputs(0, 0);
  EXPECT_TRUE(at::equal(serial, epoch_inputs(1, 1)));
  EXPECT_TRUE(at::equal(serial, epoch_inputs(4, 2)));
  EXPECT_TRUE(at::equal(serial, epoch_inputs(3, 8)));
}

TEST(BatchLoader, ChannelsLastBatchesHoldTheSameValues) {
  DatasetPair p = make_synthetic({3, 5, 4}, 4, 40, 10, 2);
  AugmentOptions aug;
  aug.order = {Augmentation::random_crop, Augmentation::horizontal_flip};
  BatchLoader plain(p.train, 16, true, aug, LoaderConfig{}, at::kCPU, 3);
  BatchLoader last(p.train, 16, true, aug, LoaderConfig{}, at::kCPU, 3, Shard{}, at::MemoryFormat::ChannelsLast);
  while (auto a = plain.next()) {
    const auto b = last.next();
    ASSERT_TRUE(b.has_value());
    EXPECT_TRUE(b->inputs.is_contiguous(at::MemoryFormat::ChannelsLast));
    EXPECT_TRUE(at::equal(a->inputs, b->inputs));
  }
}

TEST(BatchLoader, RejectsBadArguments) {
  Dataset d = index_dataset(4);
  EXPECT_THROW(BatchLoader(d, 0, true, AugmentOptions{}, LoaderConfig{}, at::kCPU, 0), DataError);
}

// ---------------------------------------------------------------- shards (ddp)

TEST(ShardedBatchLoader, RanksTogetherSeeExactlyTheGlobalBatchesOfOneProcess) {
  const Dataset d = index_dataset(120);
  BatchLoader whole(d, 30, true, AugmentOptions{}, config_with_prefetch(0), at::kCPU, 7);
  BatchLoader rank0(d, 15, true, AugmentOptions{}, config_with_prefetch(0), at::kCPU, 7, Shard{0, 2});
  BatchLoader rank1(d, 15, true, AugmentOptions{}, config_with_prefetch(1), at::kCPU, 7, Shard{1, 2});
  ASSERT_EQ(rank0.batches_per_epoch(), whole.batches_per_epoch());
  for (int64_t epoch : {1, 2}) {
    const auto all = epoch_targets(whole, epoch), a = epoch_targets(rank0, epoch), b = epoch_targets(rank1, epoch);
    ASSERT_EQ(a.size(), all.size());
    for (std::size_t i = 0; i < all.size(); ++i) {
      const at::Tensor both = std::get<0>(at::cat({a[i], b[i]}).sort());
      EXPECT_TRUE(both.equal(std::get<0>(all[i].sort()))) << "epoch " << epoch << " batch " << i;
    }
  }
}

TEST(ShardedBatchLoader, TrainingShardsArePaddedToTheSameLengthEvaluationShardsAreNot) {
  const Dataset d = index_dataset(101);
  BatchLoader pad0(d, 10, true, AugmentOptions{}, config_with_prefetch(0), at::kCPU, 1, Shard{0, 3});
  BatchLoader pad2(d, 10, true, AugmentOptions{}, config_with_prefetch(0), at::kCPU, 1, Shard{2, 3});
  EXPECT_EQ(concat(epoch_targets(pad0, 0)).size(0), 34);
  EXPECT_EQ(concat(epoch_targets(pad2, 0)).size(0), 34);  // 101 -> 102, one sample seen twice
  std::vector<at::Tensor> eval;
  for (int64_t r = 0; r < 3; ++r) {
    BatchLoader shard(d, 10, false, AugmentOptions{}, config_with_prefetch(0), at::kCPU, 0, Shard{r, 3, false});
    eval.push_back(concat(epoch_targets(shard, 0)));
  }
  EXPECT_EQ(eval[0].size(0) + eval[1].size(0) + eval[2].size(0), 101);
  EXPECT_TRUE(std::get<0>(at::cat(eval).sort()).equal(at::arange(101, at::kLong)));
}

TEST(ShardedBatchLoader, AShardThatDoesNotExistIsRefused) {
  const Dataset d = index_dataset(10);
  EXPECT_THROW(BatchLoader(d, 5, true, AugmentOptions{}, config_with_prefetch(0), at::kCPU, 1, Shard{2, 2}), DataError);
}

}  // namespace data_test
}  // namespace plugtrain::data
