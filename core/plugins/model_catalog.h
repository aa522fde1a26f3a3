// Every model architecture registered by the loaded models plugins, by name.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "plugtrain/model.h"

namespace plugtrain {

struct RegisteredModel {
  ModelSpec spec;
  std::string plugin;             // which plugin registered it
  std::vector<OptionRule> rules;  // SDK 3.2: what its option values may be
};

class ModelCatalog {
 public:
  // First registration of a name wins; later ones are reported as shadowed.
  void add(RegisteredModel model);
  const RegisteredModel* find(const std::string& name) const;
  const std::vector<RegisteredModel>& all() const { return models_; }
  const std::vector<std::string>& shadowed() const { return shadowed_; }

 private:
  std::vector<RegisteredModel> models_;
  std::vector<std::string> shadowed_;
};

}  // namespace plugtrain
