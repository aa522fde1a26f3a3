#include "data/batch_loader.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/Event.h>
#include <c10/core/Stream.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <c10/util/ParallelGuard.h>

#include "data/data_error.h"
#include "data/device_resident.h"
#include "util/clock.h"

namespace plugtrain::data {

struct BatchLoader::Impl {
  BatchMaker maker;  // the pixels of each batch; it keeps the data set
  int64_t batch_size;
  bool shuffle;
  plugtrain::LoaderConfig config;
  c10::Device device;
  uint64_t seed;
  Shard shard;
  at::MemoryFormat memory_format;
  std::shared_ptr<DeviceResident> resident;  // data.on_device: batches gathered there
  bool defer_gathers = false;                // ... or left to the step (defer_device_gathers)
  int threads = 0;     // background producers (0: the calling thread makes each batch)
  int64_t window = 0;  // batches prepared ahead of the one the trainer has

  // Epoch state: written by start_epoch while no worker runs, then only read.
  bool started = false;
  int64_t epoch = 0;
  at::Tensor order;  // int64: this rank's samples for the epoch, in order

  // A batch and, when it was copied to the device on the side stream, the event that marks
  // the copy done; or the exception preparing it threw.
  struct Prepared {
    Batch batch;
    std::shared_ptr<c10::Event> copied;
    std::exception_ptr error;
  };

  // Prefetching (guarded by mutex).
  std::vector<std::thread> workers;
  std::mutex mutex;
  std::condition_variable cv;
  int64_t claimed = 0;    // batches handed to a worker so far this epoch
  int64_t delivered = 0;  // batches next() has returned so far this epoch
  std::map<int64_t, Prepared> ready;
  bool stop = false;
  // GPU only: workers copy the next batches on this stream while the current one trains.
  // Device-generic c10 stream API, so the host library needs no CUDA at link time.
  std::optional<c10::Stream> copy_stream;
  double last_copy_seconds = 0;

  Impl(const Dataset& d, int64_t bs, bool sh, AugmentOptions aug, const plugtrain::LoaderConfig& cfg, c10::Device dev,
       uint64_t s, Shard sd, at::MemoryFormat mf, std::shared_ptr<DeviceResident> r)
      : maker(d, std::move(aug), s, sd.rank, mf, cfg.pin_memory && !dev.is_cpu()), batch_size(bs), shuffle(sh),
        config(cfg), device(dev), seed(s), shard(sd), memory_format(mf), resident(std::move(r)) {
    threads = resident ? 0 : config.workers > 0 ? config.workers : config.prefetch_depth > 0 ? 1 : 0;
    window = std::max<int64_t>(config.prefetch_depth, threads);
  }

  int64_t samples() const { return maker.data().size(); }
  int64_t shard_samples() const {
    if (shard.count == 1) return samples();
    if (shard.pad) return (samples() + shard.count - 1) / shard.count;
    return (samples() - shard.rank + shard.count - 1) / shard.count;
  }
  int64_t all_batches() const { return (shard_samples() + batch_size - 1) / batch_size; }
  int64_t num_batches() const { return limit > 0 ? std::min(limit, all_batches()) : all_batches(); }
  int64_t epoch_samples() const { return limit > 0 && limit < all_batches() ? limit * batch_size : shard_samples(); }
  int64_t limit = 0;  // train.steps_per_epoch

  // The epoch's permutation cut down to this rank's share (see Shard).
  at::Tensor shard_of(const at::Tensor& all) const {
    if (shard.count == 1) return all;
    const int64_t n = all.size(0);
    const int64_t total = shard.pad ? shard_samples() * shard.count : n;
    const at::Tensor padded =
        total == n ? all : all.index_select(0, at::arange(total, all.options()).remainder(n));
    return padded.slice(0, shard.rank, total, shard.count);
  }

  // Batch `index` of the epoch. On a worker thread its samples are made serially
  // (ParallelGuard); on the calling thread they are spread over LibTorch's intra-op threads.
  Batch produce(int64_t index) const {
    const int64_t begin = index * batch_size;
    const int64_t count = std::min(batch_size, order.size(0) - begin);
    if (resident && defer_gathers) {
      Batch deferred;
      deferred.deferred =
          std::make_shared<DeferredGather>(DeferredGather{resident, resident->places(begin, count), memory_format});
      return deferred;
    }
    if (resident) return resident->batch(begin, count, memory_format);
    return maker.make(order, begin, count, epoch);
  }

  void worker_loop() {
    c10::ParallelGuard serial(true);  // this thread's ops run serially: no second thread team
    for (;;) {
      int64_t index;
      {
        std::unique_lock<std::mutex> lock(mutex);
        cv.wait(lock, [&] { return stop || claimed == num_batches() || claimed < delivered + window; });
        if (stop || claimed == num_batches()) return;
        index = claimed++;
      }
      Prepared prepared;
      try {
        prepared.batch = produce(index);
        if (copy_stream) prepared = copy_on_side_stream(std::move(prepared.batch));
      } catch (...) {
        prepared.error = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lock(mutex);
        ready.emplace(index, std::move(prepared));
      }
      cv.notify_all();
    }
  }

  void stop_workers() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stop = true;
    }
    cv.notify_all();
    for (auto& w : workers)
      if (w.joinable()) w.join();
    workers.clear();
  }

  bool wants_side_stream() const { return !device.is_cpu() && config.non_blocking && config.pin_memory; }

  Prepared copy_on_side_stream(Batch b) const {
    c10::StreamGuard on_copy_stream(*copy_stream);
    b.inputs = b.inputs.to(device, /*non_blocking=*/true);
    b.targets = b.targets.to(device, /*non_blocking=*/true);
    for (auto& [name, field] : b.fields) field = field.to(device, /*non_blocking=*/true);
    auto copied = std::make_shared<c10::Event>(device.type());
    copied->record(*copy_stream);
    return {std::move(b), std::move(copied), nullptr};
  }

  // On the training thread: the compute stream waits for the side-stream copy (no host
  // sync), and the caching allocator learns the tensors are used on the compute stream.
  Batch ready_for_compute(Prepared p) const {
    if (!p.copied) return to_device(std::move(p.batch));
    c10::impl::VirtualGuardImpl guard(device.type());
    const c10::Stream compute = guard.getStream(device);
    p.copied->block(compute);
    p.batch.inputs.record_stream(compute);
    p.batch.targets.record_stream(compute);
    for (auto& [name, field] : p.batch.fields) field.record_stream(compute);
    return std::move(p.batch);
  }

  Batch to_device(Batch b) const {
    if (device.is_cpu() || b.deferred) return b;  // a deferred batch's places are on the device
    b.inputs = b.inputs.to(device, config.non_blocking);
    b.targets = b.targets.to(device, config.non_blocking);
    for (auto& [name, field] : b.fields) field = field.to(device, config.non_blocking);
    return b;
  }
};

BatchLoader::BatchLoader(const Dataset& data, int64_t batch_size, bool shuffle, AugmentOptions augmentation,
                         const plugtrain::LoaderConfig& config, c10::Device device, uint64_t seed, Shard shard,
                         at::MemoryFormat memory_format, std::shared_ptr<DeviceResident> resident) {
  if (batch_size <= 0) throw DataError("batch size must be positive, got " + std::to_string(batch_size));
  const bool has_pixels = data.images.defined() || data.decode;
  if (data.tokens()) {
    if (data.images.dim() != 2 || !data.labels.defined() || data.labels.size(0) != data.images.size(0))
      throw DataError("batch loader: token windows (N,T) and their targets must have the same count");
    if (!augmentation.order.empty()) throw DataError("augmentation: token ids have no pixels to augment; use none");
  } else if (!has_pixels || !data.labels.defined() || data.sample_shape.size() != 3 ||
      (data.images.defined() && (data.images.dim() != 4 || data.images.size(0) != data.labels.size(0))))
    throw DataError("batch loader: images (N,C,H,W) and labels must be defined and have the same count");
  if (shard.count < 1 || shard.rank < 0 || shard.rank >= shard.count)
    throw DataError("batch loader: shard " + std::to_string(shard.rank) + " of " + std::to_string(shard.count) +
                    " does not exist");
  const bool jitter = std::find(augmentation.order.begin(), augmentation.order.end(), Augmentation::color_jitter) !=
                      augmentation.order.end();
  if (jitter && !data.bytes())
    throw DataError("augmentation: color_jitter needs image pixels; this data set is already normalised floats");
  if (memory_format != at::MemoryFormat::Contiguous && memory_format != at::MemoryFormat::ChannelsLast)
    throw DataError("batch loader: batches are contiguous or channels-last");
  if (resident && (resident->size() != data.size() || resident->device().type() != device.type()))
    throw DataError("batch loader: the device copy of the data set is not this data set on " + device.str());
  impl_ = std::make_unique<Impl>(data, batch_size, shuffle, std::move(augmentation), config, device, seed, shard,
                                 memory_format, std::move(resident));
}

BatchLoader::~BatchLoader() { impl_->stop_workers(); }

int64_t BatchLoader::batches_per_epoch() const { return impl_->num_batches(); }
int64_t BatchLoader::samples_per_epoch() const { return impl_->epoch_samples(); }
void BatchLoader::limit_batches(int64_t batches) { impl_->limit = std::max<int64_t>(0, batches); }
void BatchLoader::defer_device_gathers(bool defer) { impl_->defer_gathers = defer; }

void BatchLoader::start_epoch(int64_t epoch) {
  Impl& s = *impl_;
  s.stop_workers();
  s.ready.clear();
  s.stop = false;
  s.claimed = 0;
  s.delivered = 0;
  s.epoch = epoch;
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(s.seed + static_cast<uint64_t>(epoch));
  const auto i64 = at::TensorOptions().dtype(at::kLong);
  s.order = s.shard_of(s.shuffle ? at::randperm(s.samples(), generator, i64) : at::arange(s.samples(), i64))
                .contiguous();
  if (s.resident) s.resident->start_epoch(s.order, s.seed, epoch, s.shard.rank);
  s.started = true;
  if (s.threads > 0) {
    if (s.wants_side_stream() && !s.copy_stream)
      s.copy_stream = c10::impl::VirtualGuardImpl(s.device.type()).getStreamFromGlobalPool(s.device);
    for (int t = 0; t < s.threads; ++t) s.workers.emplace_back([&s] { s.worker_loop(); });
  }
}

// How long the training thread spent copying (or waiting for a side-stream copy to be
// ordered before compute) for the batch next() returned last.
double BatchLoader::last_copy_seconds() const { return impl_->last_copy_seconds; }

std::optional<Batch> BatchLoader::next() {
  Impl& s = *impl_;
  if (!s.started) start_epoch(0);
  if (s.delivered == s.num_batches()) {
    s.stop_workers();
    return std::nullopt;
  }
  Impl::Prepared p;
  if (s.threads == 0) {
    p.batch = s.produce(s.delivered++);
  } else {
    std::unique_lock<std::mutex> lock(s.mutex);
    s.cv.wait(lock, [&] { return s.ready.count(s.delivered) > 0; });
    auto it = s.ready.find(s.delivered);
    p = std::move(it->second);
    s.ready.erase(it);
    ++s.delivered;
    lock.unlock();
    s.cv.notify_all();
    if (p.error) {
      s.stop_workers();
      s.delivered = s.num_batches();  // the epoch is over
      std::rethrow_exception(p.error);
    }
  }
  const auto copy_start = Clock::now();
  Batch b = s.ready_for_compute(std::move(p));
  s.last_copy_seconds = seconds_since(copy_start);
  return b;
}

}  // namespace plugtrain::data
