// dp: the model replicated over the devices of one process (distributed/data_parallel.h does
// the work); `model` is replica 0, the one the optimizer steps.
#pragma once

#include <memory>

#include "distributed/data_parallel.h"
#include "strategy/single_device.h"
#include "util/error.h"

namespace plugtrain {

class DpStrategy final : public SingleDevice {
  static constexpr const char* kNoFields = "strategy dp splits only the input over its replicas, not a batch's named fields";

 public:
  DpStrategy(Model& model, std::unique_ptr<DataParallel> replicas)
      : SingleDevice(model), replicas_(std::move(replicas)) {}

  const char* name() const override { return "dp"; }
  at::Tensor forward(const at::Tensor& inputs) override { return replicas_->forward(inputs); }
  at::Tensor evaluate(const at::Tensor& inputs) override { return replicas_->forward(inputs); }
  TensorMap forward_fields(const TensorMap&) override { throw Error(kNoFields); }
  TensorMap evaluate_fields(const TensorMap&) override { throw Error(kNoFields); }
  void backward(const std::function<void()>& backward) override {
    backward();
    replicas_->gather_gradients();
  }

 private:
  std::unique_ptr<DataParallel> replicas_;
};

}  // namespace plugtrain
