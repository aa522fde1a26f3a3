// What the host tells a model's factory (model.h): the batch it will get and the target it
// predicts, as the SDK's description interfaces.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "plugtrain/dataset.h"

namespace plugtrain {

struct FieldFacts {
  c10::ScalarType dtype = c10::ScalarType::Float;
  std::vector<std::int64_t> shape;  // per sample
  std::string lengths_field;        // the field with the real lengths of its first dimension, or ""
};

class HostBatchDescription final : public BatchDescription {
 public:
  void add(const std::string& field, FieldFacts facts);
  std::vector<std::string> fields() const override;
  bool has(const std::string& field) const override;
  c10::ScalarType dtype(const std::string& field) const override { return facts(field).dtype; }
  std::vector<std::int64_t> shape(const std::string& field) const override { return facts(field).shape; }
  std::string lengths_field(const std::string& field) const override { return facts(field).lengths_field; }
  // Throws std::out_of_range naming the field when the batch has no such field.
  const FieldFacts& facts(const std::string& field) const;

 private:
  std::vector<std::pair<std::string, FieldFacts>> fields_;  // "input" first
};

class HostTargetDescription final : public TargetDescription {
 public:
  DatasetTargets kind_ = DatasetTargets::class_index;
  std::int64_t classes_ = 0;
  std::vector<std::int64_t> shape_;
  std::vector<std::string> class_names_;
  std::int64_t model_outputs_ = 0;

  DatasetTargets kind() const override { return kind_; }
  std::int64_t classes() const override { return classes_; }
  std::vector<std::int64_t> shape() const override { return shape_; }
  std::vector<std::string> class_names() const override { return class_names_; }
  std::int64_t model_outputs() const override { return model_outputs_; }
};

struct ModelDescription {
  HostBatchDescription batch;
  HostTargetDescription target;
};

// An image model's: "input" float32 of `input_shape` per sample, `model_outputs` classes.
ModelDescription image_model_description(const std::vector<std::int64_t>& input_shape, std::int64_t model_outputs);
// A language model's: "input" int64 token ids, `window` per sample; the next token of each over `vocabulary`.
ModelDescription token_model_description(std::int64_t window, std::int64_t vocabulary);

}  // namespace plugtrain
