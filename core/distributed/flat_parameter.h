// One unit's parameters as one flat vector split evenly over the ranks (PyTorch FSDP's
// FlatParameter): this rank keeps its shard, in float32, which the optimizer steps, and the
// model's parameter tensors are views into a full buffer whose memory is allocated while the
// unit is gathered and released after. Gradients go the other way: the parameters' full
// gradients are flattened and summed into each rank's shard.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

namespace plugtrain {

// How a flat parameter is kept: the device its shard and full buffer live on (the parameters it
// is made from may still be on the host), its parameters' type while gathered (bf16 halves the
// traffic and the gathered memory; the shard stays float32, as does the optimizer's state) and
// its gradients' sum's over the ranks.
struct FlatOptions {
  c10::Device device = c10::kCPU;
  at::ScalarType parameters = at::kFloat;
  at::ScalarType reduce = at::kFloat;
  // The full buffer is never released and the shard, when float32, is this rank's part of it
  // (the optimizer updates it in place: no second copy).
  bool shard_in_full = false;
};

class FlatParameter {
 public:
  // `parameters`: the model's own parameter tensors, on one device, of one floating dtype.
  // Their values are copied into the full buffer (on options.device, in options.parameters), and
  // each is pointed at its part of it.
  FlatParameter(std::vector<at::Tensor> parameters, int rank, int world_size, const FlatOptions& options);
  FlatParameter(const FlatParameter&) = delete;
  FlatParameter& operator=(const FlatParameter&) = delete;

  std::int64_t numel() const { return numel_; }              // the parameters' elements
  std::int64_t shard_numel() const { return shard_numel_; }  // each rank's, padding included
  std::int64_t bytes_per_element() const;
  const std::vector<at::Tensor>& parameters() const { return parameters_; }
  // Where parameters()[i] starts in the full vector.
  const std::vector<std::int64_t>& offsets() const { return offsets_; }
  int rank() const { return rank_; }
  int world_size() const { return world_size_; }

  // This rank's part, a leaf that the optimizer steps and whose grad() the sync fills.
  at::Tensor& shard() { return shard_; }
  // The padded full vector (world size x shard), which the parameters view.
  at::Tensor& full() { return full_; }
  // The full buffer's memory: allocated (gathered or about to be), or released.
  bool allocated() const;
  void allocate();
  void release();
  // The shard from `flat`, laid out as full() (a checkpoint's values).
  void take_shard_from(const at::Tensor& flat);
  // The parameters as views of `flat` (laid out as full()): of a float32 copy while a
  // checkpoint is written or read under bf16 parameters, then of full() again.
  void point_parameters_at(const at::Tensor& flat);

  // The parameters' gradients (zeros for one without), flattened and padded like full() and
  // divided by the world size, ready to be summed over the ranks; the parameters' gradients are
  // dropped.
  at::Tensor take_flat_gradients();
  // Adds `averaged` (this rank's part of the sum over ranks) to the shard's gradient.
  void add_shard_gradient(const at::Tensor& averaged);

 private:
  std::vector<at::Tensor> parameters_;
  std::vector<std::int64_t> offsets_;
  std::int64_t numel_ = 0, shard_numel_ = 0;
  int rank_ = 0, world_size_ = 1;
  bool shard_in_full_ = false;
  at::ScalarType reduce_dtype_ = at::kFloat;
  at::Tensor full_, shard_;
};

}  // namespace plugtrain
