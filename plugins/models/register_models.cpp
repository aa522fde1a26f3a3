// The bundled models plugin: registers every architecture in this folder.
#include "models.h"

namespace {

void register_models(plugtrain::Registrar& host) {
  using namespace plugtrain::models;
  using plugtrain::add_model;
  add_model(host, mlp_spec(), mlp_rules());
  add_model(host, convnet_spec(), convnet_rules());
  add_model(host, lenet5_spec(), lenet5_rules());
  // The model zoo: torchvision's parameter names, so a torchvision state_dict loads directly.
  for (int depth : {18, 34, 50, 101}) add_model(host, resnet_spec(depth), resnet_rules());
  add_model(host, wide_resnet50_2_spec(), resnet_rules());
  add_model(host, wide_resnet_spec(), wide_resnet_rules());
  for (int depth : {11, 13, 16, 19}) add_model(host, vgg_bn_spec(depth), vgg_rules());
  add_model(host, mobilenet_v2_spec(), mobilenet_v2_rules());
  add_model(host, baseline_cnn_spec(), baseline_cnn_rules());
  add_model(host, unet_spec(), unet_rules());
  add_model(host, crnn_spec(), crnn_rules());
  add_model(host, gpt_spec(), gpt_rules());
  add_model(host, vit_spec(), vit_rules());
}

}  // namespace

PLUGTRAIN_PLUGIN(register_models, PLUGTRAIN_KIND_MODELS, "models", "0.1.0",
                 "Bundled architectures: mlp, convnet, lenet5, baseline_cnn, resnet18/34/50/101, "
                 "wide_resnet50_2, wide_resnet (CIFAR WRN), vgg11/13/16/19_bn, mobilenet_v2, unet, crnn, gpt, vit")
