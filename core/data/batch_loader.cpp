#include "data/batch_loader.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/Event.h>
#include <c10/core/Stream.h>
#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <c10/util/ParallelGuard.h>

#include "data/data_error.h"

namespace plugtrain::data {

struct BatchLoader::Impl {
  Dataset data;
  int64_t batch_size;
  bool shuffle;
  Augmentation augmentation;
  plugtrain::LoaderConfig config;
  c10::Device device;
  uint64_t seed;
  Shard shard;

  // Epoch state. While the worker runs, only the worker touches `generator` and `produced`;
  // start_epoch and the destructor join it before touching them again.
  bool started = false;
  at::Tensor order;  // int64 N: the epoch's sample order
  at::Generator generator;
  int64_t produced = 0;  // batches prepared so far this epoch

  // Prefetching (guarded by mutex).
  std::thread worker;
  std::mutex mutex;
  std::condition_variable cv;
  // A batch and, when it was copied to the device on the side stream, the event that marks
  // the copy done.
  struct Prepared {
    Batch batch;
    std::shared_ptr<c10::Event> copied;
  };
  std::deque<Prepared> queue;
  // GPU only: the worker copies the next batch on this stream while the current one trains.
  // Device-generic c10 stream API, so the host library needs no CUDA at link time.
  std::optional<c10::Stream> copy_stream;
  double last_copy_seconds = 0;
  bool stop = false;
  bool worker_done = false;
  std::exception_ptr error;

  Impl(const Dataset& d, int64_t bs, bool sh, Augmentation aug, const plugtrain::LoaderConfig& cfg,
       c10::Device dev, uint64_t s, Shard sd)
      : data(d), batch_size(bs), shuffle(sh), augmentation(aug), config(cfg), device(dev), seed(s), shard(sd) {}

  bool prefetching() const { return config.prefetch_depth > 0; }
  int64_t shard_samples() const {
    if (shard.count == 1) return data.size();
    if (shard.pad) return (data.size() + shard.count - 1) / shard.count;
    return (data.size() - shard.rank + shard.count - 1) / shard.count;
  }
  int64_t num_batches() const { return (shard_samples() + batch_size - 1) / batch_size; }

  // The epoch's permutation cut down to this rank's share (see Shard).
  at::Tensor shard_of(const at::Tensor& all) const {
    if (shard.count == 1) return all;
    const int64_t n = all.size(0);
    const int64_t total = shard.pad ? shard_samples() * shard.count : n;
    const at::Tensor padded =
        total == n ? all : all.index_select(0, at::arange(total, all.options()).remainder(n));
    return padded.slice(0, shard.rank, total, shard.count);
  }

  // The producer: one bulk gather, the augmentation, and pinning. Called in batch order,
  // either by the worker thread or (without prefetching) by next() itself.
  Batch produce(int64_t index) {
    const int64_t begin = index * batch_size;
    const int64_t count = std::min(batch_size, order.size(0) - begin);
    const at::Tensor idx = order.narrow(0, begin, count);
    Batch b{data.images.index_select(0, idx), data.labels.index_select(0, idx)};
    b.inputs = augment_batch(b.inputs, augmentation, generator);
    if (config.pin_memory && !device.is_cpu()) {
      b.inputs = b.inputs.pin_memory();
      b.targets = b.targets.pin_memory();
    }
    return b;
  }

  // Worker work is deliberately light (index_select + augmentation of one batch). The
  // ParallelGuard marks this thread as already inside a parallel region, so LibTorch runs
  // its ops here serially instead of opening a second intra-op thread team that would compete
  // with the trainer's; it is thread-local, unlike at::set_num_threads which is global.
  void worker_loop() {
    c10::ParallelGuard serial(true);
    try {
      for (;;) {
        {
          std::unique_lock<std::mutex> lock(mutex);
          cv.wait(lock, [&] { return stop || queue.size() < static_cast<size_t>(config.prefetch_depth); });
          if (stop) break;
        }
        if (produced == num_batches()) break;
        Prepared prepared{produce(produced++), nullptr};
        if (copy_stream) prepared = copy_on_side_stream(std::move(prepared.batch));
        {
          std::lock_guard<std::mutex> lock(mutex);
          queue.push_back(std::move(prepared));
        }
        cv.notify_all();
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      error = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mutex);
      worker_done = true;
    }
    cv.notify_all();
  }

  void stop_worker() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stop = true;
    }
    cv.notify_all();
    if (worker.joinable()) worker.join();
  }

  bool wants_side_stream() const { return !device.is_cpu() && config.non_blocking && config.pin_memory; }

  Prepared copy_on_side_stream(Batch b) const {
    c10::StreamGuard on_copy_stream(*copy_stream);
    b.inputs = b.inputs.to(device, /*non_blocking=*/true);
    b.targets = b.targets.to(device, /*non_blocking=*/true);
    auto copied = std::make_shared<c10::Event>(device.type());
    copied->record(*copy_stream);
    return {std::move(b), std::move(copied)};
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
    return std::move(p.batch);
  }

  Batch to_device(Batch b) const {
    if (device.is_cpu()) return b;
    b.inputs = b.inputs.to(device, config.non_blocking);
    b.targets = b.targets.to(device, config.non_blocking);
    return b;
  }
};

BatchLoader::BatchLoader(const Dataset& data, int64_t batch_size, bool shuffle, Augmentation augmentation,
                         const plugtrain::LoaderConfig& config, c10::Device device, uint64_t seed, Shard shard) {
  if (batch_size <= 0) throw DataError("batch size must be positive, got " + std::to_string(batch_size));
  if (!data.images.defined() || !data.labels.defined() || data.images.dim() < 1 ||
      data.images.size(0) != data.labels.size(0))
    throw DataError("batch loader: images and labels must be defined and have the same count");
  if (shard.count < 1 || shard.rank < 0 || shard.rank >= shard.count)
    throw DataError("batch loader: shard " + std::to_string(shard.rank) + " of " + std::to_string(shard.count) +
                    " does not exist");
  impl_ = std::make_unique<Impl>(data, batch_size, shuffle, augmentation, config, device, seed, shard);
}

BatchLoader::~BatchLoader() { impl_->stop_worker(); }

int64_t BatchLoader::batches_per_epoch() const { return impl_->num_batches(); }

void BatchLoader::start_epoch(int64_t epoch) {
  Impl& s = *impl_;
  s.stop_worker();
  s.queue.clear();
  s.stop = false;
  s.worker_done = false;
  s.error = nullptr;
  s.produced = 0;
  s.generator = at::make_generator<at::CPUGeneratorImpl>(s.seed + static_cast<uint64_t>(epoch));
  const auto i64 = at::TensorOptions().dtype(at::kLong);
  s.order = s.shard_of(s.shuffle ? at::randperm(s.data.size(), s.generator, i64) : at::arange(s.data.size(), i64));
  // Same permutation on every rank, but each rank's own augmentation draws.
  if (s.shard.count > 1)
    s.generator = at::make_generator<at::CPUGeneratorImpl>((s.seed + static_cast<uint64_t>(epoch)) * 1000003u +
                                                           static_cast<uint64_t>(s.shard.rank) + 1);
  s.started = true;
  if (s.prefetching()) {
    if (s.wants_side_stream() && !s.copy_stream)
      s.copy_stream = c10::impl::VirtualGuardImpl(s.device.type()).getStreamFromGlobalPool(s.device);
    s.worker = std::thread([&s] { s.worker_loop(); });
  }
}

// How long the training thread spent copying (or waiting for a side-stream copy to be
// ordered before compute) for the batch next() returned last.
double BatchLoader::last_copy_seconds() const { return impl_->last_copy_seconds; }

std::optional<Batch> BatchLoader::next() {
  Impl& s = *impl_;
  if (!s.started) start_epoch(0);
  using Clock = std::chrono::steady_clock;
  if (!s.prefetching()) {
    if (s.produced == s.num_batches()) return std::nullopt;
    Batch b = s.produce(s.produced++);
    const auto copy_start = Clock::now();
    b = s.to_device(std::move(b));
    s.last_copy_seconds = std::chrono::duration<double>(Clock::now() - copy_start).count();
    return b;
  }
  std::unique_lock<std::mutex> lock(s.mutex);
  s.cv.wait(lock, [&] { return !s.queue.empty() || s.worker_done; });
  if (s.queue.empty()) {  // the worker has finished: end of epoch, or it failed
    std::exception_ptr error = std::exchange(s.error, nullptr);
    lock.unlock();
    if (s.worker.joinable()) s.worker.join();
    if (error) std::rethrow_exception(error);
    return std::nullopt;
  }
  Impl::Prepared p = std::move(s.queue.front());
  s.queue.pop_front();
  lock.unlock();
  s.cv.notify_all();
  const auto copy_start = Clock::now();
  Batch b = s.ready_for_compute(std::move(p));
  s.last_copy_seconds = std::chrono::duration<double>(Clock::now() - copy_start).count();
  return b;
}

}  // namespace plugtrain::data
