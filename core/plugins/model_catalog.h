// What the loaded plugins register, by name: architectures (model.h), data sets (dataset.h),
// tasks (task.h) and loggers (logger.h), each as the plugin's own spec and the plugin's name.
#pragma once

#include <string>
#include <vector>

#include "plugtrain/dataset.h"
#include "plugtrain/logger.h"
#include "plugtrain/model.h"
#include "plugtrain/task.h"

namespace plugtrain {

struct RegisteredModel {
  ModelSpec spec;      // spec.batch_factory builds it; spec.serves: empty, any task that fits
  std::string plugin;  // which plugin registered it
};

struct RegisteredDataset {
  DatasetSpec spec;
  std::string plugin;
  bool has_fields() const { return !spec.fields.empty(); }
  bool gives_validation_split() const { return !spec.validation_split.empty(); }
};

// Entries by spec.name. The first registration of a name wins; later ones are reported as
// shadowed ("model 'mlp' from plugin 'b' is shadowed by plugin 'a'").
template <class Entry>
class Catalog {
 public:
  explicit Catalog(std::string what) : what_(std::move(what)) {}

  void add(Entry entry) {
    if (const Entry* first = find(entry.spec.name)) {
      shadowed_.push_back(what_ + " '" + entry.spec.name + "' from plugin '" + entry.plugin +
                          "' is shadowed by plugin '" + first->plugin + "'");
      return;
    }
    entries_.push_back(std::move(entry));
  }
  const Entry* find(const std::string& name) const {
    for (const auto& e : entries_)
      if (e.spec.name == name) return &e;
    return nullptr;
  }
  const std::vector<Entry>& all() const { return entries_; }
  const std::vector<std::string>& shadowed() const { return shadowed_; }

 private:
  std::string what_;
  std::vector<Entry> entries_;
  std::vector<std::string> shadowed_;
};

struct RegisteredTask {
  TaskSpec spec;
  std::string plugin;
};

struct RegisteredLogger {
  LoggerSpec spec;
  std::string plugin;
};

using ModelCatalog = Catalog<RegisteredModel>;
using LoggerCatalog = Catalog<RegisteredLogger>;
using TaskCatalog = Catalog<RegisteredTask>;
using DatasetCatalog = Catalog<RegisteredDataset>;

}  // namespace plugtrain
