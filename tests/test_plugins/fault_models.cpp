// A models plugin for the fault tests: "faultnet" is a linear classifier whose forward fails as
// the test says. It raises LibTorch's own c10::OutOfMemoryError, as a full device does, for
// batches larger than `max_batch` from training forward call `from_call` on (calls counted from
// 1 over the process's life), and returns nan logits at training forward call `nan_at`. That
// one is counted on the model's device, in a buffer, so that a replayed CUDA graph counts its
// forwards too: a host counter would only see the recording.
// PLUGTRAIN_TEST_FAULT (fault_switch.h) fails register_models, create_model or forward.
#include <atomic>
#include <cstdlib>
#include <limits>

#include <ATen/ops/full.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>
#include <c10/util/Exception.h>
#include <torch/nn/modules/linear.h>

#include "fault_switch.h"
#include "plugtrain/model.h"

namespace {

class FaultNet final : public plugtrain::TensorModel {
 public:
  FaultNet(std::int64_t in, std::int64_t classes, std::int64_t max_batch, std::int64_t from_call, std::int64_t nan_at)
      : max_batch_(max_batch), from_call_(from_call), nan_at_(nan_at) {
    fc_ = register_module("fc", torch::nn::Linear(in, classes));
    if (nan_at_ > 0) forwards_ = register_buffer("training_forwards", at::zeros({}, at::kLong));
  }

  torch::Tensor forward(torch::Tensor x) override {
    plugtrain_test::fault_point("forward");
    if (is_training()) {
      const std::int64_t call = ++calls_;
      if (call >= from_call_ && x.size(0) > max_batch_)
        TORCH_CHECK_WITH(OutOfMemoryError, false, "faultnet: out of memory at training forward call ", call,
                         " with a batch of ", x.size(0), " (at most ", max_batch_, " fit)");
      if (nan_at_ > 0) return nan_at_call(fc_->forward(x.flatten(1)));
    }
    return fc_->forward(x.flatten(1));
  }

 private:
  // Counts the call on the device and multiplies by nan at call nan_at, 1 otherwise: no sync.
  torch::Tensor nan_at_call(const torch::Tensor& logits) {
    forwards_.add_(1);
    const auto nan = at::full({}, std::numeric_limits<float>::quiet_NaN(), logits.options());
    return logits * at::where(forwards_ == nan_at_, nan, at::ones({}, logits.options()));
  }

  torch::nn::Linear fc_{nullptr};
  torch::Tensor forwards_;
  std::int64_t max_batch_, from_call_, nan_at_;
  std::atomic<std::int64_t> calls_{0};
};

void register_models(plugtrain::Registrar& host) {
  plugtrain_test::fault_point("register_models");
  plugtrain::ModelSpec spec;
  spec.name = "faultnet";
  spec.description = "linear classifier that runs out of memory above max_batch from forward call from_call on";
  spec.options = {
      {"max_batch", plugtrain::OptionType::integer, std::int64_t(1) << 40, "largest batch that fits"},
      {"from_call", plugtrain::OptionType::integer, std::int64_t(1), "first training forward call that may fail"},
      {"nan_at", plugtrain::OptionType::integer, std::int64_t(0),
       "training forward call whose logits are nan (0: none)"},
  };
  spec.factory = [](const plugtrain::ModelInputs& in,
                    const plugtrain::Options& o) -> std::shared_ptr<plugtrain::Model> {
    plugtrain_test::fault_point("create_model");
    const auto& s = in.input_shape;
    return std::make_shared<FaultNet>(s[0] * s[1] * s[2], in.num_classes, o.integer("max_batch"),
                                      o.integer("from_call"), o.integer("nan_at"));
  };
  // PLUGTRAIN_TEST_FAULT=rules:misfit registers a rule for an option faultnet does not have.
  const char* fault = std::getenv("PLUGTRAIN_TEST_FAULT");
  const bool misfit = fault && std::string(fault) == "rules:misfit";
  spec.rules = {plugtrain::OptionRule(misfit ? "nope" : "max_batch").at_least(1)};
  host.add_model(std::move(spec));
}

}  // namespace

PLUGTRAIN_PLUGIN(register_models, PLUGTRAIN_KIND_MODELS, "faultmodels", "0.0.1", "a model that fails when told to")
