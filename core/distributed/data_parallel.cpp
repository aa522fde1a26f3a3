#include "plugins/model_forward.h"
#include "distributed/data_parallel.h"

#include <exception>
#include <stdexcept>
#include <string>
#include <thread>

#include <ATen/ATen.h>
#include <ATen/ThreadLocalState.h>
#include <c10/core/DeviceGuard.h>

#include "util/error.h"
#include "util/format.h"

namespace plugtrain {

DataParallel::DataParallel(std::vector<std::shared_ptr<Model>> replicas, std::vector<c10::Device> devices)
    : replicas_(std::move(replicas)), devices_(std::move(devices)) {
  if (replicas_.empty() || replicas_.size() != devices_.size())
    throw Error("dp: " + std::to_string(replicas_.size()) + " replicas for " +
                                std::to_string(devices_.size()) + " devices");
  for (const auto& replica : replicas_) {
    parameters_.push_back(replica->parameters());
    buffers_.push_back(replica->buffers());
  }
  // The factory must build the same network every time, or weights cannot be copied across.
  for (std::size_t r = 1; r < replicas_.size(); ++r) {
    if (parameters_[r].size() != parameters_[0].size() || buffers_[r].size() != buffers_[0].size())
      throw Error("dp: the model factory built replica " + std::to_string(r) +
                               " with a different number of tensors than replica 0");
    for (std::size_t i = 0; i < parameters_[0].size(); ++i)
      if (!parameters_[r][i].sizes().equals(parameters_[0][i].sizes()))
        throw Error("dp: replica " + std::to_string(r) + " parameter " + std::to_string(i) + " is " +
                                 shape_text(parameters_[r][i].sizes()) + ", replica 0's is " +
                                 shape_text(parameters_[0][i].sizes()));
  }
}

void DataParallel::copy_weights_to_replicas() {
  const bool training = replicas_[0]->is_training();
  // Training changes the weights after every forward; evaluation does not, so one copy serves
  // all of an evaluation's batches.
  if (!training && copied_for_evaluation_) return;
  copied_for_evaluation_ = !training;
  at::NoGradGuard no_grad;
  for (std::size_t r = 1; r < replicas_.size(); ++r) {
    replicas_[r]->train(training);
    for (std::size_t i = 0; i < parameters_[0].size(); ++i)
      parameters_[r][i].copy_(parameters_[0][i], /*non_blocking=*/true);
    for (std::size_t i = 0; i < buffers_[0].size(); ++i) buffers_[r][i].copy_(buffers_[0][i], /*non_blocking=*/true);
  }
}

at::Tensor DataParallel::forward(const at::Tensor& inputs) {
  if (replicas_.size() == 1) return forward_input(*replicas_[0], inputs);
  copy_weights_to_replicas();
  // Parts differ by one sample at most (a batch of 10 over 4 replicas: 3, 3, 2, 2); a batch
  // smaller than the number of replicas leaves the last ones idle.
  std::vector<at::Tensor> parts = inputs.tensor_split(static_cast<std::int64_t>(replicas_.size()), 0);
  while (parts.size() > 1 && parts.back().size(0) == 0) parts.pop_back();
  std::vector<at::Tensor> outputs(parts.size());
  std::vector<std::exception_ptr> errors(parts.size());
  // The threads inherit this one's grad mode and autocast settings, as PyTorch's parallel_apply does.
  const at::ThreadLocalState state;
  auto run = [&](std::size_t r) {
    try {
      at::ThreadLocalStateGuard same_state(state);
      c10::OptionalDeviceGuard on_device;
      if (!devices_[r].is_cpu()) on_device.reset_device(devices_[r]);
      outputs[r] = forward_input(*replicas_[r], parts[r].to(devices_[r], /*non_blocking=*/true)).to(devices_[0]);
    } catch (...) {
      errors[r] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  try {
    for (std::size_t r = 1; r < parts.size(); ++r) threads.emplace_back(run, r);
    run(0);
  } catch (...) {  // a thread could not start: wait for those that did before giving up
    for (auto& t : threads) t.join();
    throw;
  }
  for (auto& t : threads) t.join();
  for (const auto& error : errors)
    if (error) std::rethrow_exception(error);
  return at::cat(outputs, 0);
}

void DataParallel::gather_gradients() {
  at::NoGradGuard no_grad;
  for (std::size_t r = 1; r < replicas_.size(); ++r)
    for (std::size_t i = 0; i < parameters_[0].size(); ++i) {
      at::Tensor& grad = parameters_[r][i].mutable_grad();
      if (!grad.defined()) continue;  // this replica had no part of the batch, or the parameter was unused
      at::Tensor& total = parameters_[0][i].mutable_grad();
      const at::Tensor here = grad.to(devices_[0], /*non_blocking=*/true);
      if (total.defined())
        total.add_(here);
      else
        total = here.is_same(grad) ? here.clone() : here;
      grad.reset();  // frees the replica's device memory until the next backward
    }
}

}  // namespace plugtrain
