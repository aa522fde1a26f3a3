#include "optim/state_tensors.h"

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

#include "optim/lion.h"

namespace plugtrain {

namespace {

// Adam's and AdamW's states: the same three fields in two unrelated classes.
template <class AdamState>
bool visit_adam_state(torch::optim::OptimizerParamState& state, const StateTensorVisitor& visit) {
  auto* s = dynamic_cast<AdamState*>(&state);
  if (!s) return false;
  visit("exp_avg", s->exp_avg(), [s](const at::Tensor& t) { s->exp_avg(t); });
  visit("exp_avg_sq", s->exp_avg_sq(), [s](const at::Tensor& t) { s->exp_avg_sq(t); });
  visit("max_exp_avg_sq", s->max_exp_avg_sq(), [s](const at::Tensor& t) { s->max_exp_avg_sq(t); });
  return true;
}

}  // namespace

void for_each_state_tensor(torch::optim::OptimizerParamState& state, const StateTensorVisitor& visit) {
  if (visit_adam_state<torch::optim::AdamParamState>(state, visit) ||
      visit_adam_state<torch::optim::AdamWParamState>(state, visit)) {
    return;
  } else if (auto* s = dynamic_cast<torch::optim::SGDParamState*>(&state)) {
    visit("momentum_buffer", s->momentum_buffer(), [s](const at::Tensor& t) { s->momentum_buffer(t); });
  } else if (auto* s = dynamic_cast<torch::optim::RMSpropParamState*>(&state)) {
    visit("square_avg", s->square_avg(), [s](const at::Tensor& t) { s->square_avg(t); });
    visit("momentum_buffer", s->momentum_buffer(), [s](const at::Tensor& t) { s->momentum_buffer(t); });
    visit("grad_avg", s->grad_avg(), [s](const at::Tensor& t) { s->grad_avg(t); });
  } else if (auto* s = dynamic_cast<LionParamState*>(&state)) {
    visit("exp_avg", s->exp_avg(), [s](const at::Tensor& t) { s->exp_avg(t); });
  }
}

}  // namespace plugtrain
