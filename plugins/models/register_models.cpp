// The bundled models plugin: registers every architecture in this folder.
#include "models.h"

namespace {

void register_models(plugtrain::ModelRegistry& registry) {
  using namespace plugtrain::models;
  using plugtrain::DatasetTargets;
  registry.add(mlp_spec(), mlp_rules());
  registry.add(convnet_spec(), convnet_rules());
  registry.add(lenet5_spec(), lenet5_rules());
  // The model zoo: torchvision's parameter names, so a torchvision state_dict loads directly.
  for (int depth : {18, 34, 50, 101}) registry.add(resnet_spec(depth), resnet_rules());
  registry.add(wide_resnet50_2_spec(), resnet_rules());
  registry.add(wide_resnet_spec(), wide_resnet_rules());
  for (int depth : {11, 13, 16, 19}) registry.add(vgg_bn_spec(depth), vgg_rules());
  registry.add(mobilenet_v2_spec(), mobilenet_v2_rules());
  registry.add(baseline_cnn_spec(), baseline_cnn_rules());
  registry.add(unet_spec(), unet_rules());
  registry.add(crnn_spec(), crnn_rules());

  // What each one's outputs fit (SDK 3.6): (N, K) scores serve a class, a set of labels or K
  // values per sample; the U-Net's (N, K, H, W) a class per pixel; the CRNN's (N, T, K + 1) a sequence.
  const std::vector<DatasetTargets> per_sample = {DatasetTargets::class_index, DatasetTargets::multi_hot, DatasetTargets::real};
  for (const std::string& name : {"mlp", "convnet", "lenet5", "resnet18", "resnet34", "resnet50", "resnet101", "wide_resnet50_2",
                                  "wide_resnet", "vgg11_bn", "vgg13_bn", "vgg16_bn", "vgg19_bn", "mobilenet_v2", "baseline_cnn"})
    registry.declare_targets(name, per_sample);
  registry.declare_targets("unet", {DatasetTargets::pixel_class});
  registry.declare_targets("crnn", {DatasetTargets::sequence});
}

}  // namespace

PLUGTRAIN_MODELS_PLUGIN(register_models, "models", "0.1.0",
                        "Bundled architectures: mlp, convnet, lenet5, baseline_cnn, resnet18/34/50/101, "
                        "wide_resnet50_2, wide_resnet (CIFAR WRN), vgg11/13/16/19_bn, mobilenet_v2, unet, crnn")
