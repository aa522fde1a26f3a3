#include "distributed/flat_parameter.h"

#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/StorageImpl.h>

#include "util/error.h"

namespace plugtrain {

FlatParameter::FlatParameter(std::vector<at::Tensor> parameters, int rank, int world_size, const FlatOptions& options)
    : parameters_(std::move(parameters)), rank_(rank), world_size_(world_size), reduce_dtype_(options.reduce) {
  if (parameters_.empty()) throw Error("internal: a flat parameter of no parameters");
  for (const at::Tensor& p : parameters_) {
    offsets_.push_back(numel_);
    numel_ += p.numel();
  }
  shard_numel_ = (numel_ + world_size - 1) / world_size;
  at::NoGradGuard no_grad;
  // The parameters' own values, flat, from which this rank's float32 shard is cut.
  at::Tensor values = at::zeros({shard_numel_ * world_size}, parameters_.front().options().requires_grad(false));
  for (std::size_t i = 0; i < parameters_.size(); ++i)
    values.narrow(0, offsets_[i], parameters_[i].numel()).copy_(parameters_[i].detach().reshape(-1));
  full_ = values.to(options.device, options.parameters);
  // The parameters keep their identity (autograd, the model's references) and now live in the
  // full buffer's memory, so gathering into that buffer is gathering the parameters.
  point_parameters_at(full_);
  shard_in_full_ = options.shard_in_full && full_.scalar_type() == at::kFloat;
  shard_ = shard_in_full_ ? full_.narrow(0, shard_numel_ * rank, shard_numel_)
                          : values.narrow(0, shard_numel_ * rank, shard_numel_)
                                .to(options.device, at::kFloat, /*non_blocking=*/false, /*copy=*/true);
  shard_.requires_grad_(true);
}

void FlatParameter::point_parameters_at(const at::Tensor& flat) {
  for (std::size_t i = 0; i < parameters_.size(); ++i)
    parameters_[i].set_data(flat.narrow(0, offsets_[i], parameters_[i].numel()).view(parameters_[i].sizes()));
}

std::int64_t FlatParameter::bytes_per_element() const { return static_cast<std::int64_t>(full_.element_size()); }

bool FlatParameter::allocated() const { return full_.storage().nbytes() > 0; }

void FlatParameter::allocate() {
  if (allocated()) return;
  // Allocators allocate on the current device: make it the buffer's (rank 1's is not device 0).
  const c10::OptionalDeviceGuard on_its_device(full_.device());
  c10::StorageImpl* storage = full_.storage().unsafeGetStorageImpl();
  const std::size_t bytes = static_cast<std::size_t>(full_.numel()) * full_.element_size();
  storage->set_data_ptr_noswap(storage->allocator()->allocate(bytes));
  storage->set_nbytes(bytes);
}

void FlatParameter::release() {
  if (shard_in_full_) throw Error("internal: releasing a flat parameter whose shard lives in it");
  // The parameters share this storage object: they keep their shapes and lose their memory
  // until the next allocate(). Nothing may read them meanwhile.
  full_.storage().unsafeGetStorageImpl()->reset();
}

void FlatParameter::take_shard_from(const at::Tensor& flat) {
  if (shard_in_full_ && flat.is_same(full_)) return;
  at::NoGradGuard no_grad;
  shard_.copy_(flat.narrow(0, shard_numel_ * rank_, shard_numel_));
}

at::Tensor FlatParameter::take_flat_gradients() {
  // Summed in the reduction's type (float32 under bf16 parameters: fp32 reductions); zeros
  // where a parameter got no gradient (or none did: every rank takes part in the sum).
  at::Tensor flat = at::zeros({shard_numel_ * world_size_}, full_.options().dtype(reduce_dtype_));
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    at::Tensor& p = parameters_[i];
    if (!p.grad().defined()) continue;
    flat.narrow(0, offsets_[i], p.numel()).copy_(p.grad().reshape(-1));
    p.mutable_grad() = at::Tensor();
  }
  // Divided before the sum, as ddp's reducer does, so both round alike.
  return flat.div_(world_size_);
}

void FlatParameter::add_shard_gradient(const at::Tensor& averaged) {
  at::Tensor average = averaged.to(at::kFloat, /*non_blocking=*/false, /*copy=*/true);
  if (shard_.grad().defined())
    shard_.mutable_grad().add_(average);
  else
    shard_.mutable_grad() = average;
}

}  // namespace plugtrain
