// What one plugin registers (a backend, models, data sets, tasks, loggers), collected through the SDK's
// Registrar before any of it reaches the host's catalogs, so a plugin that throws
// half-way, or registers something wrong, contributes nothing: the first wrong registration is
// the reason it is refused.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "plugins/model_catalog.h"
#include "plugtrain/plugin.h"
#include "util/result.h"

namespace plugtrain {

class StagingRegistrar final : public Registrar {
 public:
  void add_backend(std::unique_ptr<Backend> backend) override;
  void add_model(ModelSpec spec) override;
  void add_dataset(DatasetSpec spec) override;
  void add_task(TaskSpec spec) override;
  void add_logger(LoggerSpec spec) override;

  // After the registration returned: the first wrong registration, else what each entry lacks.
  Status all_fit() const;
  // The PLUGTRAIN_KIND_* bits of what was registered.
  std::uint32_t kinds_given() const;

  std::unique_ptr<Backend> backend;
  // What was registered; `plugin` is filled by the host once the plugin is accepted.
  const std::vector<RegisteredModel>& models() const { return models_; }
  const std::vector<RegisteredDataset>& datasets() const { return datasets_; }
  const std::vector<RegisteredTask>& tasks() const { return tasks_; }
  const std::vector<RegisteredLogger>& loggers() const { return loggers_; }

 private:
  void refuse(std::string why);

  int backends_ = 0;
  std::vector<RegisteredModel> models_;
  std::vector<RegisteredDataset> datasets_;
  std::vector<RegisteredTask> tasks_;
  std::vector<RegisteredLogger> loggers_;
  Status first_wrong_;
};

}  // namespace plugtrain
