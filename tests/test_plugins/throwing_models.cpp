// A models plugin that registers one model and then throws: nothing of it may be kept.
#include <stdexcept>

#include "plugtrain/model.h"

namespace {

void register_then_throw(plugtrain::Registrar& host) {
  plugtrain::ModelSpec spec;
  spec.name = "halfregistered";
  spec.description = "must not appear";
  host.add_model(spec);
  throw std::runtime_error("registry on fire");
}

}  // namespace

PLUGTRAIN_PLUGIN(register_then_throw, PLUGTRAIN_KIND_MODELS, "throwmodels", "0.0.1", "throws while registering")
