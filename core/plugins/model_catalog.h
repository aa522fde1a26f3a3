// What the loaded plugins register, by name: architectures (model.h), since SDK 3.5 data sets
// (dataset.h), since 3.6 tasks (task.h).
#pragma once

#include <string>
#include <vector>

#include "plugtrain/dataset.h"
#include "plugtrain/model.h"
#include "plugtrain/task.h"

namespace plugtrain {

struct RegisteredModel {
  ModelSpec spec;
  std::string plugin;             // which plugin registered it
  std::vector<OptionRule> rules;  // SDK 3.2: what its option values may be
  std::vector<DatasetTargets> targets;  // SDK 3.6: the kinds of task it serves; empty: any that fits
  std::uint32_t sdk_minor = 0;           // of its plugin: from 6 on, Model::forward_fields exists
};

struct RegisteredDataset {
  DatasetSpec spec;
  std::string plugin;
  std::vector<OptionRule> rules;
  DatasetFieldsFactory fields_factory;  // SDK 3.6: set for a data set with named fields (used instead of spec.factory)
  DatasetReader reader;                 // SDK 3.7: set for a reader (used instead of spec.factory)
  DatasetPathCheck check;               // SDK 3.7: a reader's check of data.path, before any work (may be empty)
  DatasetValidationReader validation_reader;  // SDK 3.8: set for a reader that also gives the data set's val split
  bool gives_validation_split() const { return bool(validation_reader); }
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
  std::vector<OptionRule> rules;
  std::uint32_t sdk_minor = 0;  // of its plugin: which TaskFunctions calls it has
};

using ModelCatalog = Catalog<RegisteredModel>;
using TaskCatalog = Catalog<RegisteredTask>;
using DatasetCatalog = Catalog<RegisteredDataset>;

}  // namespace plugtrain
