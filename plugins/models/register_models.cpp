// The bundled models plugin: registers every architecture in this folder.
#include "models.h"

namespace {

void register_models(plugtrain::ModelRegistry& registry) {
  using namespace plugtrain::models;
  registry.add(mlp_spec(), mlp_rules());
  registry.add(convnet_spec(), convnet_rules());
  registry.add(lenet5_spec(), lenet5_rules());
}

}  // namespace

PLUGTRAIN_MODELS_PLUGIN(register_models, "models", "0.1.0", "Bundled architectures: mlp, convnet, lenet5")
