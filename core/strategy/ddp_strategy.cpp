#include "strategy/ddp_strategy.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <gloo/common/error.h>

#include "util/text.h"

namespace plugtrain {

namespace {

// Runs a part of the step that waits on the other processes. A failure of the collective
// itself — c10d's distributed errors (store, network, NCCL), Gloo's own exceptions — becomes a
// CollectiveError, which the run answers by asking which rank is at fault. Anything else (this
// rank's own autograd, device or plugin error) passes unchanged: this rank then tells the
// others why it stops.
template <class Fn>
auto collectively(const char* what, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const CollectiveError&) {
    throw;
  } catch (const c10::DistError& error) {
    throw CollectiveError(std::string(what) + ": " + first_line(error.what()));
  } catch (const ::gloo::Exception& error) {
    throw CollectiveError(std::string(what) + ": " + first_line(error.what()));
  }
}

}  // namespace

DdpStrategy::DdpStrategy(Model& model, Collectives& collectives, std::int64_t bucket_bytes)
    : model_(model), collectives_(collectives), bucket_bytes_(bucket_bytes) {}

DdpStrategy::~DdpStrategy() = default;

void DdpStrategy::prepare() {
  collectively("sharing rank 0's weights", [&] {
    sync_ = std::make_unique<GradientSync>(collectives_, model_.parameters(), model_.buffers(), bucket_bytes_);
  });
}

void DdpStrategy::share_buffers_before_forward() {
  if (!sync_) prepare();
  collectively("sharing rank 0's buffers", [&] { sync_->before_forward(); });
}

at::Tensor DdpStrategy::forward(const at::Tensor& inputs) {
  share_buffers_before_forward();
  return forward_input(model_, inputs);
}

TensorMap DdpStrategy::forward_fields(const TensorMap& batch) {
  share_buffers_before_forward();
  return model_.forward_batch(batch);
}

void DdpStrategy::before_evaluation() {
  // Every rank evaluates rank 0's model (batch-norm statistics included).
  if (!sync_) prepare();
  collectively("sharing rank 0's buffers", [&] { sync_->share_buffers(); });
}

void DdpStrategy::backward(const std::function<void()>& backward) {
  if (!sync_) prepare();
  sync_->before_backward();
  // In backward the reducer's all-reduce is the only part that waits on the other ranks.
  collectively("gradient all-reduce", backward);
}

void DdpStrategy::before_unsynced_forward() { share_buffers_before_forward(); }

void DdpStrategy::average_gradients(const std::vector<at::Tensor>& parameters) {
  std::vector<at::Tensor> grads, flat;
  for (const auto& p : parameters)
    if (p.grad().defined()) {
      grads.push_back(p.grad());
      flat.push_back(p.grad().reshape(-1));
    }
  if (grads.empty()) return;
  std::vector<at::Tensor> all{at::cat(flat)};
  collectively("gradient all-reduce", [&] { collectives_.all_reduce_sum(all); });
  all[0].div_(collectives_.size());
  std::int64_t offset = 0;
  for (auto& g : grads) {
    g.copy_(all[0].narrow(0, offset, g.numel()).view(g.sizes()));
    offset += g.numel();
  }
}

std::vector<double> DdpStrategy::sum(std::vector<double> values) {
  // One round trip on the CPU, where Gloo is fastest for a few numbers.
  std::vector<at::Tensor> t{at::tensor(values, at::TensorOptions().dtype(at::kDouble))};
  collectives_.all_reduce_sum(t);
  const double* p = t[0].data_ptr<double>();
  return std::vector<double>(p, p + values.size());
}

void DdpStrategy::note_step(std::int64_t step) {
  collectively("reporting the step to the rendezvous store", [&] { collectives_.note_step(step); });
}

bool DdpStrategy::agree_to_stop(bool this_process_wants) { return sum({this_process_wants ? 1.0 : 0.0})[0] > 0; }

}  // namespace plugtrain
