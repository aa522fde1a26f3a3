// What one plugin registers (a backend, models, data sets, tasks, loggers), collected through the SDK's
// Registrar and builders before any of it reaches the host's catalogs, so a plugin that throws
// half-way, or registers something wrong, contributes nothing: the first wrong registration is
// the reason it is refused.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "plugins/model_catalog.h"
#include "plugtrain/plugin.h"
#include "util/result.h"

namespace plugtrain {

class StagingRegistrar final : public Registrar {
 public:
  StagingRegistrar();
  ~StagingRegistrar() override;

  void add_backend(std::unique_ptr<Backend> backend) override;
  ModelBuilder& add_model(const std::string& name) override;
  DatasetBuilder& add_dataset(const std::string& name) override;
  TaskBuilder& add_task(const std::string& name) override;
  void* host_extension(const char* name, std::uint32_t version) override;
  LoggerBuilder& add_logger(const std::string& name) override;

  // After the registration returned: the first wrong registration, else what each entry lacks.
  Status all_fit() const;
  // The PLUGTRAIN_KIND_* bits of what was registered.
  std::uint32_t kinds_given() const;

  std::unique_ptr<Backend> backend;
  std::vector<RegisteredModel> models() const;
  std::vector<RegisteredDataset> datasets() const;
  std::vector<RegisteredTask> tasks() const;
  std::vector<RegisteredLogger> loggers() const;

 private:
  class ModelEntry;
  class DatasetEntry;
  class TaskEntry;
  class LoggerEntry;
  void refuse(std::string why);
  int backends_ = 0;
  // Builders stay where they are while the plugin holds references to them.
  std::deque<std::unique_ptr<ModelEntry>> models_;
  std::deque<std::unique_ptr<DatasetEntry>> datasets_;
  std::deque<std::unique_ptr<TaskEntry>> tasks_;
  std::deque<std::unique_ptr<LoggerEntry>> loggers_;
  Status first_wrong_;
};

}  // namespace plugtrain
