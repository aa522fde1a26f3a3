// A models plugin that registers one model and then throws: nothing of it may be kept.
#include <stdexcept>

#include "plugtrain/model.h"

namespace {

void register_then_throw(plugtrain::ModelRegistry& registry) {
  plugtrain::ModelSpec spec;
  spec.name = "halfregistered";
  spec.description = "must not appear";
  registry.add(spec);
  throw std::runtime_error("registry on fire");
}

}  // namespace

PLUGTRAIN_MODELS_PLUGIN(register_then_throw, "throwmodels", "0.0.1", "throws while registering")
