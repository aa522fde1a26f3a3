// dp: the model replicated over the devices of one process (distributed/data_parallel.h does
// the work); `model` is replica 0, the one the optimizer steps.
#pragma once

#include <memory>

#include "distributed/data_parallel.h"
#include "strategy/single_device.h"

namespace plugtrain {

class DpStrategy final : public SingleDevice {
 public:
  DpStrategy(Model& model, std::unique_ptr<DataParallel> replicas)
      : SingleDevice(model), replicas_(std::move(replicas)) {}

  const char* name() const override { return "dp"; }
  at::Tensor forward(const at::Tensor& inputs) override { return replicas_->forward(inputs); }
  at::Tensor evaluate(const at::Tensor& inputs) override { return replicas_->forward(inputs); }
  void backward(const std::function<void()>& backward) override {
    backward();
    replicas_->gather_gradients();
  }

 private:
  std::unique_ptr<DataParallel> replicas_;
};

}  // namespace plugtrain
