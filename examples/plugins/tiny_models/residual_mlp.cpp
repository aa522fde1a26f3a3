// "residual_mlp": flatten, a linear stem, `blocks` residual blocks (x + fc2(relu(fc1(x)))),
// and a linear classifier: one architecture with its options and their rules (checked against
// the experiment's [model] table by the host) and its factory. Submodule names are the
// state_dict keys, as in the equivalent Python module. With rings.cpp's data set, the plugin's
// one registration gives a model and a data set.
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/linear.h>

#include "plugtrain/model.h"

namespace tiny {
void add_rings(plugtrain::Registrar& host);  // rings.cpp
}

namespace {

struct Block : torch::nn::Module {
  explicit Block(std::int64_t width)
      : fc1(register_module("fc1", torch::nn::Linear(width, width))),
        fc2(register_module("fc2", torch::nn::Linear(width, width))) {}
  torch::Tensor forward(const torch::Tensor& x) { return x + fc2->forward(torch::relu(fc1->forward(x))); }
  torch::nn::Linear fc1, fc2;
};

class ResidualMlp final : public plugtrain::TensorModel {
 public:
  ResidualMlp(std::int64_t in, std::int64_t width, std::int64_t blocks, std::int64_t classes)
      : stem_(register_module("stem", torch::nn::Linear(in, width))),
        head_(register_module("head", torch::nn::Linear(width, classes))) {
    for (std::int64_t i = 0; i < blocks; ++i)
      blocks_.push_back(register_module("block" + std::to_string(i), std::make_shared<Block>(width)));
  }
  torch::Tensor forward(torch::Tensor x) override {
    x = torch::relu(stem_->forward(x.flatten(1)));
    for (auto& b : blocks_) x = b->forward(x);
    return head_->forward(x);
  }

 private:
  torch::nn::Linear stem_, head_;
  std::vector<std::shared_ptr<Block>> blocks_;
};

void register_plugin(plugtrain::Registrar& host) {
  plugtrain::ModelSpec spec;
  spec.name = "residual_mlp";
  spec.description = "MLP with residual blocks: stem, blocks x (x + fc2(relu(fc1(x)))), head";
  spec.options = {
      {"width", plugtrain::OptionType::integer, std::int64_t(128), "features in every block"},
      {"blocks", plugtrain::OptionType::integer, std::int64_t(2), "residual blocks"},
  };
  spec.factory = [](const plugtrain::ModelInputs& in, const plugtrain::Options& o) -> std::shared_ptr<plugtrain::Model> {
    std::int64_t features = 1;
    for (std::int64_t d : in.input_shape) features *= d;
    return std::make_shared<ResidualMlp>(features, o.integer("width"), o.integer("blocks"), in.num_classes);
  };
  // Checked by the host against the experiment before any data is loaded.
  spec.rules = {plugtrain::OptionRule("width").at_least(1), plugtrain::OptionRule("blocks").at_least(0)};
  host.add_model(std::move(spec));
  tiny::add_rings(host);
}

}  // namespace

PLUGTRAIN_PLUGIN(register_plugin, PLUGTRAIN_KIND_MODELS | PLUGTRAIN_KIND_DATASETS, "tiny", "1.0.0",
                 "a residual MLP and the rings data set (an example plugin)")
