#include "optim/optimizer_state_on_host.h"

#include <vector>

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

#include "optim/lion.h"

namespace plugtrain {

namespace {

class HostCopies {
 public:
  // `set` puts a tensor into the state field that holds `field`. The handle is copied first:
  // `field` is the state's own member (the getters return references), which `set` replaces.
  template <class Set>
  void swap(const at::Tensor& field, Set set) {
    const at::Tensor original = field;
    if (!original.defined() || original.is_cpu()) return;
    set(original.cpu());
    restores_.emplace_back([original, set] { set(original); });
  }
  void restore() {
    for (auto& put_back : restores_) put_back();
    restores_.clear();
  }

 private:
  std::vector<std::function<void()>> restores_;
};

// Adam's and AdamW's states: the same three fields in two unrelated classes.
template <class AdamState>
bool swap_adam_state(torch::optim::OptimizerParamState& state, HostCopies& copies) {
  auto* s = dynamic_cast<AdamState*>(&state);
  if (!s) return false;
  copies.swap(s->exp_avg(), [s](const at::Tensor& t) { s->exp_avg(t); });
  copies.swap(s->exp_avg_sq(), [s](const at::Tensor& t) { s->exp_avg_sq(t); });
  copies.swap(s->max_exp_avg_sq(), [s](const at::Tensor& t) { s->max_exp_avg_sq(t); });
  return true;
}

void swap_state(torch::optim::OptimizerParamState& state, HostCopies& copies) {
  if (swap_adam_state<torch::optim::AdamParamState>(state, copies) ||
      swap_adam_state<torch::optim::AdamWParamState>(state, copies)) {
    return;
  } else if (auto* s = dynamic_cast<torch::optim::SGDParamState*>(&state)) {
    copies.swap(s->momentum_buffer(), [s](const at::Tensor& t) { s->momentum_buffer(t); });
  } else if (auto* s = dynamic_cast<torch::optim::RMSpropParamState*>(&state)) {
    copies.swap(s->square_avg(), [s](const at::Tensor& t) { s->square_avg(t); });
    copies.swap(s->momentum_buffer(), [s](const at::Tensor& t) { s->momentum_buffer(t); });
    copies.swap(s->grad_avg(), [s](const at::Tensor& t) { s->grad_avg(t); });
  } else if (auto* s = dynamic_cast<LionParamState*>(&state)) {
    copies.swap(s->exp_avg(), [s](const at::Tensor& t) { s->exp_avg(t); });
  }
}

}  // namespace

void with_optimizer_state_on_host(torch::optim::Optimizer& optimizer, const std::function<void()>& save) {
  HostCopies copies;
  try {
    for (auto& [key, state] : optimizer.state())
      if (state) swap_state(*state, copies);
    save();
  } catch (...) {
    copies.restore();
    throw;
  }
  copies.restore();
}

}  // namespace plugtrain
