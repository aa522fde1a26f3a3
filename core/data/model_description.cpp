#include "data/model_description.h"

#include <stdexcept>

namespace plugtrain {

void HostBatchDescription::add(const std::string& field, FieldFacts facts) {
  for (auto& [name, known] : fields_)
    if (name == field) {
      known = std::move(facts);
      return;
    }
  fields_.emplace_back(field, std::move(facts));
}

std::vector<std::string> HostBatchDescription::fields() const {
  std::vector<std::string> names;
  for (const auto& [name, facts] : fields_) names.push_back(name);
  return names;
}

bool HostBatchDescription::has(const std::string& field) const {
  for (const auto& [name, facts] : fields_)
    if (name == field) return true;
  return false;
}

const FieldFacts& HostBatchDescription::facts(const std::string& field) const {
  for (const auto& [name, facts] : fields_)
    if (name == field) return facts;
  throw std::out_of_range("the batch has no field '" + field + "'");
}

ModelDescription image_model_description(const std::vector<std::int64_t>& input_shape, std::int64_t model_outputs) {
  ModelDescription d;
  d.batch.add("input", {c10::ScalarType::Float, input_shape, ""});
  d.target.classes_ = model_outputs;
  d.target.model_outputs_ = model_outputs;
  return d;
}

ModelDescription token_model_description(std::int64_t window, std::int64_t vocabulary) {
  ModelDescription d;
  d.batch.add("input", {c10::ScalarType::Long, {window}, ""});
  d.target.kind_ = DatasetTargets::next_token;
  d.target.classes_ = vocabulary;
  d.target.shape_ = {window};
  d.target.model_outputs_ = vocabulary;
  return d;
}

}  // namespace plugtrain
