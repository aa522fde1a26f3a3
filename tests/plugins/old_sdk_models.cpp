// A models plugin ("sdk" TEST_SDK "models") built against a released SDK's own headers, like
// old_sdk_backend.cpp: it registers "sdk" TEST_SDK "_mlp" through the registry its SDK knew
// (3.0: add(spec); 3.2: add(spec, rules)), with options whose every field is distinctive.
#include <torch/nn/functional/activation.h>
#include <torch/nn/modules/linear.h>

#include "plugtrain/backend.h"  // for the layout of its types too
#include "plugtrain/model.h"
#include "sdk_layout.h"

static_assert(PLUGTRAIN_SDK_ABI_MINOR == TEST_SDK_MINOR, "the released headers must come first on the include path");

namespace {

class OldSdkMlp final : public plugtrain::Model {
 public:
  OldSdkMlp(std::int64_t in, std::int64_t hidden, std::int64_t classes, double gain, bool tanh)
      : gain_(gain), tanh_(tanh) {
    fc1_ = register_module("fc1", torch::nn::Linear(in, hidden));
    fc2_ = register_module("fc2", torch::nn::Linear(hidden, classes));
  }
  torch::Tensor forward(torch::Tensor x) override {
    torch::Tensor h = fc1_->forward(x.flatten(1)) * gain_;
    return fc2_->forward(tanh_ ? torch::tanh(h) : torch::relu(h));
  }

 private:
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr};
  double gain_;
  bool tanh_;
};

void register_models(plugtrain::ModelRegistry& registry) {
  using plugtrain::OptionType;
  plugtrain::ModelSpec spec;
  spec.name = "sdk" TEST_SDK "_mlp";
  spec.description = "an MLP registered by a plugin built with the sdk " TEST_SDK " headers";
  spec.options = {
      {"hidden", OptionType::integer, std::int64_t(TEST_SDK_NUMBER), "hidden features (sdk " TEST_SDK ")"},
      {"gain", OptionType::real, 1.25, "scales the hidden layer (sdk " TEST_SDK ")"},
      {"activation", OptionType::string, std::string("relu"), "relu or tanh (sdk " TEST_SDK ")"},
      {"spare", OptionType::integer_list, std::vector<std::int64_t>{3, 0, TEST_SDK_NUMBER}, "not used (sdk " TEST_SDK ")"},
  };
  spec.factory = [](const plugtrain::ModelInputs& in, const plugtrain::Options& o) -> std::shared_ptr<plugtrain::Model> {
    std::int64_t features = 1;
    for (std::int64_t d : in.input_shape) features *= d;
    return std::make_shared<OldSdkMlp>(features, o.integer("hidden"), in.num_classes, o.real("gain"),
                                       o.string("activation") == "tanh");
  };
#if PLUGTRAIN_SDK_ABI_MINOR >= 2
  registry.add(spec, {plugtrain::OptionRule("hidden").at_least(1).at_most(4096),
                      plugtrain::OptionRule("gain").above(0),
                      plugtrain::OptionRule("activation").one_of({"relu", "tanh"}),
                      plugtrain::OptionRule("spare").length(1, 5)});
#else
  registry.add(spec);
#endif
}

}  // namespace

PLUGTRAIN_MODELS_PLUGIN(register_models, "sdk" TEST_SDK "models", "1.0." TEST_SDK, "models built with the sdk " TEST_SDK " headers")
PLUGTRAIN_TEST_EXPORT_LAYOUT(PLUGTRAIN_TEST_BACKEND_LAYOUT + PLUGTRAIN_TEST_MODEL_LAYOUT)
