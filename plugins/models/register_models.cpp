// The bundled models plugin: registers every architecture in this folder.
#include "models.h"

namespace {

// A model's spec with its option rules (each model file gives the two apart).
plugtrain::ModelSpec ruled(plugtrain::ModelSpec spec, std::vector<plugtrain::OptionRule> rules) {
  spec.rules = std::move(rules);
  return spec;
}

void register_models(plugtrain::Registrar& host) {
  using namespace plugtrain::models;
  host.add_model(ruled(mlp_spec(), mlp_rules()));
  host.add_model(ruled(convnet_spec(), convnet_rules()));
  host.add_model(ruled(lenet5_spec(), lenet5_rules()));
  // The model zoo: torchvision's parameter names, so a torchvision state_dict loads directly.
  for (int depth : {18, 34, 50, 101}) host.add_model(ruled(resnet_spec(depth), resnet_rules()));
  host.add_model(ruled(wide_resnet50_2_spec(), resnet_rules()));
  host.add_model(ruled(wide_resnet_spec(), wide_resnet_rules()));
  for (int depth : {11, 13, 16, 19}) host.add_model(ruled(vgg_bn_spec(depth), vgg_rules()));
  host.add_model(ruled(mobilenet_v2_spec(), mobilenet_v2_rules()));
  host.add_model(ruled(baseline_cnn_spec(), baseline_cnn_rules()));
  host.add_model(ruled(unet_spec(), unet_rules()));
  host.add_model(ruled(crnn_spec(), crnn_rules()));
  host.add_model(ruled(gpt_spec(), gpt_rules()));
  host.add_model(ruled(vit_spec(), vit_rules()));
}

}  // namespace

PLUGTRAIN_PLUGIN(register_models, PLUGTRAIN_KIND_MODELS, "models", "0.1.0",
                 "Bundled architectures: mlp, convnet, lenet5, baseline_cnn, resnet18/34/50/101, "
                 "wide_resnet50_2, wide_resnet (CIFAR WRN), vgg11/13/16/19_bn, mobilenet_v2, unet, crnn, gpt, vit")
