// DDP's gradient averaging for one model replica per process: LibTorch's c10d::Reducer
// (the engine under PyTorch's DistributedDataParallel) hooks every parameter's gradient,
// packs gradients into buckets and all-reduces each bucket as soon as backward has filled
// it, so communication overlaps the rest of the backward pass. After backward() returns,
// every rank holds the average gradient.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>

namespace plugtrain {

class Collectives;

class GradientSync {
 public:
  // Starts by copying rank 0's parameters and buffers to every rank.
  GradientSync(Collectives& collectives, std::vector<at::Tensor> parameters, std::vector<at::Tensor> buffers,
               std::int64_t bucket_bytes);
  ~GradientSync();
  GradientSync(const GradientSync&) = delete;
  GradientSync& operator=(const GradientSync&) = delete;

  void before_forward();   // buffers (e.g. batch-norm statistics) from rank 0, as DDP does
  void share_buffers();    // the same, alone (before evaluation)
  void before_backward();  // arms the reducer for this step's backward pass
  std::size_t buckets() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace plugtrain
