// Discovers, checks and loads every plugin on the search path, in order; the rest of the
// host asks it for backends and models. Construction never throws because of a bad plugin:
// each problem is recorded on that plugin's PluginRecord.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <boost/dll/shared_library.hpp>

#include "plugins/backend_handle.h"
#include "plugins/model_catalog.h"
#include "plugins/plugin_record.h"
#include "plugins/search_path.h"

namespace plugtrain {

class PluginHost {
 public:
  explicit PluginHost(const SearchOptions& options);

  const std::vector<SearchRoot>& search_roots() const { return roots_; }
  const std::vector<PluginRecord>& plugins() const { return records_; }
  std::vector<BackendHandle>& backends() { return backends_; }
  BackendHandle* backend(const std::string& name);
  const ModelCatalog& models() const { return models_; }
  const DatasetCatalog& datasets() const { return datasets_; }
  const TaskCatalog& tasks() const { return tasks_; }
  const LoggerCatalog& loggers() const { return loggers_; }
  // "plugin 'x' (path) did not load: reason" for each refused plugin of this kind ("backend",
  // "models") whose handshake was read, optionally only the one named `name` (then also a file
  // named plugtrain_<kind>_<name> refused before its handshake): why a backend or model a user
  // asked for is missing.
  std::vector<std::string> load_failures(const std::string& kind, const std::string& name = "") const;

 private:
  bool run_init_hook(PluginRecord& record, boost::dll::shared_library& library);
  // What the plugin registers: a backend, models, data sets, tasks, loggers, the kinds its handshake names.
  void import_registration(PluginRecord& record, boost::dll::shared_library& library);

  std::vector<SearchRoot> roots_;
  std::vector<PluginRecord> records_;
  std::vector<BackendHandle> backends_;
  ModelCatalog models_{"model"};
  DatasetCatalog datasets_{"data set"};
  TaskCatalog tasks_{"task"};
  LoggerCatalog loggers_{"logger"};
};

}  // namespace plugtrain
