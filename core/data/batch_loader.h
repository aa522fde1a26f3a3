// Mini-batches from a Dataset: a seeded per-epoch permutation, each sample's pixels (from
// memory, or decoded on demand) augmented and normalised into a float batch, on background
// worker threads with a bounded prefetch window, and the copy to the training device as the
// backend's LoaderConfig asks (pinned memory, async copies).
//
// Determinism: epoch e shuffles with a generator seeded with seed + e; sample k of the
// epoch (of this rank) is augmented with its own SampleRng seeded from (seed, e, rank, k).
// So the batches are identical with any number of workers and prefetching on or off, and do
// not depend on what happened in earlier epochs.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/MemoryFormat.h>

#include "data/augment.h"
#include "data/batch_maker.h"
#include "data/dataset.h"
#include "plugtrain/backend.h"

namespace plugtrain::data {

// This process's share of the data in a multi-process run (rank `rank` of `count`), the way
// PyTorch's DistributedSampler shards: every rank draws the same (seed, epoch) permutation,
// pads it by wrapping around to a multiple of `count` (training; so every rank has as many
// batches) and takes every count-th sample from position `rank`. Batch b of all ranks
// together is then exactly batch b of one process with a batch `count` times larger.
struct Shard {
  int64_t rank = 0;
  int64_t count = 1;
  bool pad = true;  // false (evaluation): no sample twice, ranks may differ by one sample
};

class DeviceResident;

class BatchLoader {
 public:
  // The loader keeps its own (shallow) copy of the data set's tensors. config.workers > 0
  // background threads prepare batches, at most max(workers, prefetch_depth) ahead of the
  // one training; workers = 0 with prefetch_depth > 0 means one thread; both 0: batches are
  // made on the calling thread (spread over LibTorch's intra-op threads). Throws DataError
  // for bad arguments or augmentation options (color_jitter needs byte images).
  //
  // `resident` (data.on_device): `data` already on the device (device_resident.h); batches are
  // then gathered there on the calling thread, the same batches as without it.
  BatchLoader(const Dataset& data, int64_t batch_size, bool shuffle, AugmentOptions augmentation,
              const plugtrain::LoaderConfig& config, c10::Device device, uint64_t seed, Shard shard = {},
              at::MemoryFormat memory_format = at::MemoryFormat::Contiguous,
              std::shared_ptr<DeviceResident> resident = nullptr);
  ~BatchLoader();  // stops and joins the background thread
  BatchLoader(const BatchLoader&) = delete;
  BatchLoader& operator=(const BatchLoader&) = delete;

  // ceil(samples of this shard / batch_size): the last, partial batch is kept.
  int64_t batches_per_epoch() const;
  // Samples of this shard per epoch (the last batch holds what is left).
  int64_t samples_per_epoch() const;
  // Each epoch ends after `batches` batches of its permutation (0: none), an evaluation interval
  // shorter than the data (train.steps_per_epoch). Call before start_epoch.
  void limit_batches(int64_t batches);
  // data.on_device: from the next batch on, batches come deferred (Batch::deferred), their samples'
  // places without the gather, for a step that gathers them inside its recording. Without data
  // on the device, nothing changes.
  void defer_device_gathers(bool defer);

  // Begins epoch `epoch` (any previous epoch is abandoned, its prefetching stopped).
  void start_epoch(int64_t epoch);

  // The next batch of the current epoch, or nullopt when the epoch is over. Calling it
  // before start_epoch starts epoch 0. An exception thrown while preparing a batch on the
  // background thread is rethrown here, after the batches prepared before it.
  std::optional<Batch> next();
  // Of the last batch next() returned: the training thread's time copying it to the device.
  double last_copy_seconds() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace plugtrain::data
