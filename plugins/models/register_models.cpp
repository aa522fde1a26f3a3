// The bundled models plugin: registers every architecture in this folder.
#include "models.h"

namespace {

void register_models(plugtrain::ModelRegistry& registry) {
  registry.add(plugtrain::models::mlp_spec());
  registry.add(plugtrain::models::convnet_spec());
  registry.add(plugtrain::models::lenet5_spec());
}

}  // namespace

PLUGTRAIN_MODELS_PLUGIN(register_models, "models", "0.1.0", "Bundled architectures: mlp, convnet, lenet5")
