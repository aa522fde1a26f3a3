#include "distributed/gradient_sync.h"

#include <torch/csrc/distributed/c10d/comm.hpp>
#include <torch/csrc/distributed/c10d/reducer.hpp>

#include "distributed/c10d_access.h"

namespace plugtrain {

namespace {
// PyTorch's DDP defaults: a small first bucket so the first all-reduce starts early in
// backward, and the chunk size for broadcasting the model's state.
constexpr std::int64_t first_bucket_bytes = 1024 * 1024;
constexpr std::size_t broadcast_bytes = 250 * 1024 * 1024;
}  // namespace

struct GradientSync::Impl {
  c10::intrusive_ptr<c10d::ProcessGroup> group;
  std::vector<at::Tensor> buffers;
  std::unique_ptr<c10d::Reducer> reducer;
  std::size_t bucket_count = 0;
};

GradientSync::GradientSync(Collectives& collectives, std::vector<at::Tensor> parameters,
                           std::vector<at::Tensor> buffers, std::int64_t bucket_bytes)
    : impl_(std::make_unique<Impl>()) {
  impl_->group = collectives.impl().group;
  impl_->buffers = std::move(buffers);
  {
    // Same starting point everywhere, whatever each rank initialised or loaded.
    std::vector<at::Tensor> state = parameters;
    state.insert(state.end(), impl_->buffers.begin(), impl_->buffers.end());
    at::NoGradGuard no_grad;
    c10d::broadcast_coalesced(impl_->group, state, broadcast_bytes, 0);
  }
  // Buckets as PyTorch's DDP forms them: parameters in reverse order (roughly the order
  // backward produces their gradients), a small first bucket, then bucket_bytes each.
  const std::vector<bool> sparse(parameters.size(), false);
  auto [buckets, limits] = c10d::compute_bucket_assignment_by_size(
      parameters, {std::size_t(first_bucket_bytes), std::size_t(bucket_bytes)}, sparse, {}, std::nullopt);
  std::reverse(buckets.begin(), buckets.end());
  std::vector<std::int64_t> limit_list(limits.rbegin(), limits.rend());
  impl_->bucket_count = buckets.size();
  impl_->reducer = std::make_unique<c10d::Reducer>(
      std::move(parameters), std::move(buckets), impl_->group, sparse, bucket_bytes,
      /*find_unused_parameters=*/false, /*gradient_as_bucket_view=*/false,
      std::unordered_map<std::size_t, std::string>{}, first_bucket_bytes,
      /*skip_all_reduce_unused_params=*/false, /*use_python_reducer=*/false, std::move(limit_list));
}

GradientSync::~GradientSync() = default;

void GradientSync::before_forward() {
  share_buffers();
  impl_->reducer->prepare_for_forward();
}

void GradientSync::share_buffers() {
  if (impl_->buffers.empty()) return;
  at::NoGradGuard no_grad;
  c10d::broadcast_coalesced(impl_->group, impl_->buffers, broadcast_bytes, 0);
}

void GradientSync::before_backward() { impl_->reducer->prepare_for_backward({}); }

std::size_t GradientSync::buckets() const { return impl_->bucket_count; }

}  // namespace plugtrain
