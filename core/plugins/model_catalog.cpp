#include "plugins/model_catalog.h"

namespace plugtrain {

void ModelCatalog::add(RegisteredModel model) {
  if (const RegisteredModel* first = find(model.spec.name)) {
    shadowed_.push_back("model '" + model.spec.name + "' from plugin '" + model.plugin +
                        "' is shadowed by plugin '" + first->plugin + "'");
    return;
  }
  models_.push_back(std::move(model));
}

const RegisteredModel* ModelCatalog::find(const std::string& name) const {
  for (const auto& m : models_)
    if (m.spec.name == name) return &m;
  return nullptr;
}

}  // namespace plugtrain
