// data.on_device (data/device_resident.h): the batches gathered from a device copy of the
// data set are the host loader's, value for value — shuffled order, shard, partial last
// batch, normalisation, channels-last, and every crop padding mode and flip, in either order.
// Run with the CPU as "the device": the same ATen operations run on a GPU.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "data/batch_loader.h"
#include "data/data_error.h"
#include "data/device_resident.h"
#include "readers/synthetic.h"

namespace plugtrain::data {
namespace device_resident_test {

// Byte images with every value, a non-square shape, and per-channel statistics.
Dataset byte_images(int64_t n = 37) {
  Dataset d;
  d.sample_shape = {3, 7, 5};
  d.images = at::randint(0, 256, {n, 3, 7, 5}, at::TensorOptions().dtype(at::kByte));
  d.labels = at::randint(0, 4, {n}, at::TensorOptions().dtype(at::kLong));
  d.num_classes = 4;
  d.normalization = byte_statistics(d.images);
  return d;
}

AugmentOptions moves(const std::vector<std::string>& order, PaddingMode mode = PaddingMode::constant) {
  AugmentOptions o;
  for (const std::string& name : order) o.order.push_back(*choice_named<Augmentation>(name));
  o.crop_padding = 3;
  o.crop_padding_mode = mode;
  return o;
}

// Two epochs of both loaders, batch by batch.
void expect_same_batches(const Dataset& d, const AugmentOptions& augmentation, Shard shard = {},
                         at::MemoryFormat format = at::MemoryFormat::Contiguous) {
  const c10::Device cpu(c10::kCPU);
  LoaderConfig serial;  // no workers: both on this thread
  BatchLoader host(d, 10, /*shuffle=*/true, augmentation, serial, cpu, /*seed=*/11, shard, format);
  BatchLoader device(d, 10, /*shuffle=*/true, augmentation, serial, cpu, /*seed=*/11, shard, format,
                     std::make_shared<DeviceResident>(d, augmentation, cpu));
  ASSERT_EQ(host.batches_per_epoch(), device.batches_per_epoch());
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    host.start_epoch(epoch);
    device.start_epoch(epoch);
    for (int64_t b = 0;; ++b) {
      const auto expected = host.next();
      const auto got = device.next();
      ASSERT_EQ(expected.has_value(), got.has_value()) << "batch " << b;
      if (!expected) break;
      ASSERT_TRUE(at::equal(expected->targets, got->targets)) << "epoch " << epoch << " batch " << b;
      ASSERT_EQ(expected->fields.size(), got->fields.size());
      for (const auto& [name, rows] : expected->fields)
        ASSERT_TRUE(at::equal(rows, got->fields.at(name))) << name << ", epoch " << epoch << " batch " << b;
      ASSERT_EQ(expected->inputs.sizes(), got->inputs.sizes());
      EXPECT_EQ(expected->inputs.strides(), got->inputs.strides()) << "memory format";
      const double difference = (expected->inputs - got->inputs).abs().max().item<double>();
      EXPECT_LE(difference, 1e-6) << "epoch " << epoch << " batch " << b;
    }
  }
}

TEST(DeviceResident, PlainBatchesAreTheHostLoadersIncludingThePartialLastOne) {
  expect_same_batches(byte_images(), {});
}

TEST(DeviceResident, CropsInEveryPaddingModeAndFlipsMatchTheHostAugmentation) {
  const Dataset d = byte_images();
  for (PaddingMode mode : {PaddingMode::constant, PaddingMode::reflect, PaddingMode::edge}) {
    SCOPED_TRACE(int(mode));
    expect_same_batches(d, moves({"random_crop"}, mode));
    expect_same_batches(d, moves({"random_crop", "horizontal_flip"}, mode));
    expect_same_batches(d, moves({"horizontal_flip", "random_crop"}, mode));
  }
  expect_same_batches(d, moves({"horizontal_flip"}));
}

TEST(DeviceResident, ShardsChannelsLastAndFloatDataMatchToo) {
  const Dataset d = byte_images();
  expect_same_batches(d, moves({"random_crop", "horizontal_flip"}), Shard{1, 3, true});
  expect_same_batches(d, moves({"random_crop", "horizontal_flip"}), {}, at::MemoryFormat::ChannelsLast);
  const Dataset floats = make_synthetic({2, 6, 6}, 3, 29, 5, 2).train;
  expect_same_batches(floats, moves({"random_crop", "horizontal_flip"}, PaddingMode::reflect));
  expect_same_batches(floats, {});
}

// A data set's named fields (SDK 3.6: a clip's input_lengths) reach a batch on the device in the
// same rows as the host loader's, and an out-of-memory retry's halves keep them beside their samples.
TEST(DeviceResident, NamedFieldsTravelWithTheirSamplesAndHalvesKeepThem) {
  Dataset d = byte_images();
  d.fields["input_lengths"] = at::arange(1, d.size() + 1, at::TensorOptions().dtype(at::kLong));
  expect_same_batches(d, {});
  expect_same_batches(d, moves({"random_crop"}), Shard{0, 2, true});

  const c10::Device cpu(c10::kCPU);
  BatchLoader device(d, 10, /*shuffle=*/true, {}, LoaderConfig{}, cpu, /*seed=*/3, {}, at::MemoryFormat::Contiguous,
                     std::make_shared<DeviceResident>(d, AugmentOptions{}, cpu));
  device.start_epoch(0);
  const Batch batch = *device.next();
  for (const Batch& half : {batch.narrow(0, 5), batch.narrow(5, 5)})
    for (int64_t i = 0; i < 5; ++i) {
      // Each sample's length is its index + 1 and its label is the data set's: rows stay together.
      const int64_t sample = half.fields.at("input_lengths")[i].item<int64_t>() - 1;
      EXPECT_EQ(half.targets[i].item<int64_t>(), d.labels[sample].item<int64_t>());
    }
}

TEST(DeviceResident, SaysWhyADataSetCannotLiveOnTheDevice) {
  Dataset d = byte_images();
  EXPECT_TRUE(servable_on_device(d, moves({"random_crop", "horizontal_flip"})).ok());
  AugmentOptions rotation;
  rotation.order = {Augmentation::random_crop, Augmentation::rotation};
  EXPECT_EQ(servable_on_device(d, rotation).why_not(),
            "augmentation rotation runs on the loader threads (the device does random_crop and horizontal_flip)");
  EXPECT_THROW(DeviceResident(d, rotation, c10::Device(c10::kCPU)), DataError);
  Dataset decoded = d;
  decoded.images = at::Tensor();
  decoded.decode = [](int64_t, uint8_t*) {};
  EXPECT_NE(servable_on_device(decoded, {}).why_not().find("decoded on demand"), std::string::npos);
  // 37 samples of 3x8x6 bytes (one zero row and column added for padding) and their labels.
  EXPECT_EQ(bytes_on_device(d, moves({"random_crop"})), 37 * 3 * 8 * 6 + 37 * 8);
  EXPECT_EQ(bytes_on_device(d, {}), 37 * 3 * 7 * 5 + 37 * 8);
}

}  // namespace device_resident_test
}  // namespace plugtrain::data
