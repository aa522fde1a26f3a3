#include "plugtrain/model.h"
void plugtrain_register(plugtrain::ModelRegistry&) {}
PLUGTRAIN_MODELS_PLUGIN(plugtrain_register, "models", "0.1.0", "placeholder")
