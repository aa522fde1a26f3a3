// data.on_device: a data set kept on the training device, and batches made there.
//
// The images go to the device once, as they are in memory (uint8, or float for the synthetic
// set), with the labels. A batch is then a gather on the device (index_select of its samples,
// or, with random_crop and horizontal_flip, one advanced index over sample, row and column),
// a conversion to float and the per-channel normalisation: no host copy per step, only the
// epoch's order and its crop/flip maps, uploaded once per epoch.
//
// The batches are the host loader's, value for value: the same (seed, epoch) permutation and
// shard, and the crops and flips drawn per sample by the same SampleRng, on the host, as
// maps of where each output row and column comes from (augment.h, pixel_source_maps). Only
// augmentations that move pixels can run this way; the others need the loader threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/MemoryFormat.h>

#include "data/augment.h"
#include "data/dataset.h"
#include "util/result.h"

namespace plugtrain::data {

struct Batch;
class DeviceResident;

// Where a batch's samples are in the data set on the device: their indices (int64, B) and, with
// crops or flips, each output row's and column's source (B,H and B,W; the data set's zero row and
// column for padding).
struct GatherPlaces {
  at::Tensor samples, rows, cols;  // rows and cols: undefined without crops or flips
  GatherPlaces narrow(int64_t begin, int64_t count) const;
};

// A batch of a data set on the device, not yet gathered (Batch::deferred).
struct DeferredGather {
  std::shared_ptr<const DeviceResident> source;
  GatherPlaces places;
  at::MemoryFormat memory_format = at::MemoryFormat::Contiguous;
};

// Fine when `data` with `augmentation` can be served from the device; otherwise refused with why.
Status servable_on_device(const Dataset& data, const AugmentOptions& augmentation);

// Bytes the data set takes on the device.
int64_t bytes_on_device(const Dataset& data, const AugmentOptions& augmentation);

class DeviceResident {
 public:
  // Copies `data` to `device` (throws DataError when servable_on_device refuses).
  DeviceResident(const Dataset& data, const AugmentOptions& augmentation, c10::Device device);

  int64_t size() const { return labels_.size(0); }
  c10::Device device() const { return labels_.device(); }
  int64_t bytes() const;

  // The epoch's samples (this rank's `order`, host int64) and, with crops or flips, each
  // position's maps drawn with SampleRng(seed_of(seed, epoch, rank, position)).
  void start_epoch(const at::Tensor& order, uint64_t seed, int64_t epoch, int64_t rank);
  // Positions [begin, begin + count) of the epoch as a float batch on the device:
  // gather(places(begin, count), memory_format).
  Batch batch(int64_t begin, int64_t count, at::MemoryFormat memory_format) const;
  // Where positions [begin, begin + count) of the epoch are: views of this epoch's tensors.
  GatherPlaces places(int64_t begin, int64_t count) const;
  // The batch of the samples at `places` (a copy of places(...) does as well: a recorded step
  // gathers from its own copy): the gather, the conversion to float and the normalisation.
  Batch gather(const GatherPlaces& places, at::MemoryFormat memory_format) const;

 private:
  AugmentOptions augmentation_;
  bool moves_ = false;          // crops or flips: images_ carry one zero row and column at the end
  std::vector<int64_t> shape_;  // C,H,W of a sample
  at::Tensor images_, labels_;  // on the device
  std::map<std::string, at::Tensor> fields_;  // the data set's fields, on the device
  at::Tensor scale_, shift_;    // (1,C,1,1) float: pixel -> normalised
  at::Tensor channel_index_;    // 0..C-1 (int64), with crops or flips
  at::Tensor order_, rows_, cols_;  // this epoch's, on the device
};

}  // namespace plugtrain::data
