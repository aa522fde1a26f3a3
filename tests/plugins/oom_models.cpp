// A models plugin for the out-of-memory tests: "oomnet" is a linear classifier whose forward
// raises LibTorch's own c10::OutOfMemoryError, as a full device does, for batches larger than
// `max_batch` from training forward call `from_call` on (counted from 1 over the process's life).
#include <atomic>

#include <c10/util/Exception.h>
#include <torch/nn/modules/linear.h>

#include "plugtrain/model.h"

namespace {

class OomNet final : public plugtrain::Model {
 public:
  OomNet(std::int64_t in, std::int64_t classes, std::int64_t max_batch, std::int64_t from_call)
      : max_batch_(max_batch), from_call_(from_call) {
    fc_ = register_module("fc", torch::nn::Linear(in, classes));
  }

  torch::Tensor forward(torch::Tensor x) override {
    if (is_training()) {
      const std::int64_t call = ++calls_;
      if (call >= from_call_ && x.size(0) > max_batch_)
        TORCH_CHECK_WITH(OutOfMemoryError, false, "oomnet: out of memory at training forward call ", call,
                         " with a batch of ", x.size(0), " (at most ", max_batch_, " fit)");
    }
    return fc_->forward(x.flatten(1));
  }

 private:
  torch::nn::Linear fc_{nullptr};
  std::int64_t max_batch_, from_call_;
  std::atomic<std::int64_t> calls_{0};
};

void register_models(plugtrain::ModelRegistry& registry) {
  plugtrain::ModelSpec spec;
  spec.name = "oomnet";
  spec.description = "linear classifier that runs out of memory above max_batch from forward call from_call on";
  spec.options = {
      {"max_batch", plugtrain::OptionType::integer, std::int64_t(1) << 40, "largest batch that fits"},
      {"from_call", plugtrain::OptionType::integer, std::int64_t(1), "first training forward call that may fail"},
  };
  spec.factory = [](const plugtrain::ModelInputs& in, const plugtrain::Options& o) -> std::shared_ptr<plugtrain::Model> {
    const auto& s = in.input_shape;
    return std::make_shared<OomNet>(s[0] * s[1] * s[2], in.num_classes, o.integer("max_batch"), o.integer("from_call"));
  };
  registry.add(spec);
}

}  // namespace

PLUGTRAIN_MODELS_PLUGIN(register_models, "oommodels", "0.0.1", "a model that runs out of memory when told to")
