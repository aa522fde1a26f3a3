// What one plugin registers (models, data sets, tasks), collected before any of it reaches the
// host's catalogs, so a plugin that throws half-way, or registers something wrong, contributes
// nothing: the first wrong registration is the reason it is refused.
#pragma once

#include <vector>

#include "plugins/model_catalog.h"
#include "util/result.h"

namespace plugtrain {

class StagingModels : public ModelRegistry {
 public:
  void add(ModelSpec spec) override { add(std::move(spec), {}); }
  void add(ModelSpec spec, std::vector<OptionRule> rules) override;
  void declare_targets(const std::string& model, std::vector<DatasetTargets> targets) override;

  std::vector<RegisteredModel> models;
  Status all_fit;  // refused: the first registration that was wrong
};

class StagingDatasets : public DatasetRegistry {
 public:
  void add(DatasetSpec spec, std::vector<OptionRule> rules) override;
  void add_with_fields(DatasetSpec spec, std::vector<OptionRule> rules, DatasetFieldsFactory factory) override;
  void add_reader(DatasetSpec spec, std::vector<OptionRule> rules, DatasetReader reader, DatasetPathCheck check) override;
  void add_reader_with_validation(DatasetSpec spec, std::vector<OptionRule> rules, DatasetValidationReader reader,
                                  DatasetPathCheck check) override;

  std::vector<RegisteredDataset> datasets;
  Status all_fit;

 private:
  void stage(DatasetSpec spec, std::vector<OptionRule> rules);
  void stage_reader(DatasetSpec spec, std::vector<OptionRule> rules, bool has_reader, DatasetPathCheck check);
};

class StagingTasks : public TaskRegistry {
 public:
  void add(TaskSpec spec, std::vector<OptionRule> rules) override;

  std::vector<RegisteredTask> tasks;
  Status all_fit;
};

}  // namespace plugtrain
