// One float batch from a Dataset, on the host: each sample's pixels (from memory, or decoded on
// demand) augmented with its own SampleRng and normalised, in the loader's memory format. The
// part of the batch loader (data/batch_loader.h) that knows pixels; the loader decides which
// samples, when, on which thread, and moves the batch to the device.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/MemoryFormat.h>

#include "data/augment.h"
#include "data/dataset.h"

namespace plugtrain::data {

struct DeferredGather;

struct Batch {
  at::Tensor inputs;   // float32 B,C,H,W on the loader's device (channels-last strides when asked),
                       // or int64 B,T token ids
  at::Tensor targets;  // the B samples' rows of the data set's labels, on the loader's device
  std::map<std::string, at::Tensor> fields;  // the samples' rows of the data set's fields (dataset.h)
  // data.on_device, when the loader is asked to defer (BatchLoader::defer_device_gathers): the
  // batch not yet gathered, as its samples' places on the device, and the tensors above empty.
  // A recorded step gathers it inside its recording (train/graph_step.h); gathered() does it now.
  std::shared_ptr<const DeferredGather> deferred;

  int64_t size() const;  // samples
  // Samples [begin, begin + count): views of this batch's tensors (of its places, if deferred).
  Batch narrow(int64_t begin, int64_t count) const;
  // This batch with its tensors: itself, or a deferred batch gathered now.
  Batch gathered() const;
};

class BatchMaker {
 public:
  // `rank`: this process's shard, part of each sample's augmentation seed. `pin`: the batch
  // in pinned memory, for an asynchronous copy to the device.
  BatchMaker(const Dataset& data, AugmentOptions augmentation, uint64_t seed, int64_t rank,
             at::MemoryFormat memory_format, bool pin);

  const Dataset& data() const { return data_; }

  // Samples order[begin, begin + count) of epoch `epoch` as one batch; the positions of the
  // epoch (this rank's numbering) seed the augmentation. Samples are spread over LibTorch's
  // intra-op threads (serially on a thread under c10::ParallelGuard); what one throws is
  // rethrown here.
  Batch make(const at::Tensor& order, int64_t begin, int64_t count, int64_t epoch) const;

 private:
  // Per-channel maps: byte pixel v -> v * byte_scale + shift (straight to normalised), or,
  // after augmenting on the [0, 1] scale, x -> x * unit_scale + shift.
  struct ChannelMaps {
    explicit ChannelMaps(const Dataset& d);
    std::vector<float> byte_scale, unit_scale, shift;
    std::vector<float> erase_fill;  // random_erasing's value before normalisation: the mean
  };

  Batch gather_windows(const at::Tensor& samples) const;
  // Sample `sample`, at `position` of the epoch, into `out` (C,H,W floats).
  void make_sample(int64_t epoch, int64_t position, int64_t sample, float* out) const;

  Dataset data_;
  Augmenter augmenter_;
  ChannelMaps maps_;
  uint64_t seed_;
  int64_t rank_;
  at::MemoryFormat memory_format_;
  bool pin_;
};

}  // namespace plugtrain::data
