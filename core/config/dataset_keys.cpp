#include "config/dataset_keys.h"

#include "config/config_error.h"
#include "config/toml_text.h"

namespace plugtrain {

namespace {

const char* const kBundledPlugin = "datasets";

// The data set, its [data] key and the option it became.
struct CopiedKey {
  const char* dataset;
  const char* data_key;
  const char* option;
};
const CopiedKey kCopied[] = {
    {"cifar100", "label", "label"},
    {"synthetic", "synthetic_shape", "shape"},
    {"synthetic", "synthetic_classes", "classes"},
    {"synthetic", "synthetic_train_size", "train_size"},
    {"synthetic", "synthetic_test_size", "test_size"},
};

}  // namespace

void copy_data_keys_to_dataset(ExperimentFile& file, const std::string& dataset, const std::string& plugin) {
  const toml::table* data = file.table["data"].as_table();
  if (!data || plugin != kBundledPlugin) return;
  for (const CopiedKey& k : kCopied) {
    const toml::node* value = data->get(k.data_key);
    if (!value || dataset != k.dataset) continue;
    if (!file.table.contains("dataset")) file.table.insert("dataset", toml::table{});
    toml::table& options = *file.table["dataset"].as_table();
    if (const toml::node* given = options.get(k.option)) {
      if (toml_text(*given) != toml_text(*value))
        throw ConfigError(key_location(file, std::string("data.") + k.data_key) + ": data." + k.data_key + " = " +
                          toml_text(*value) + " and dataset." + k.option + " = " + toml_text(*given) +
                          " set the same option; keep one");
      continue;
    }
    value->visit([&options, name = k.option](auto&& node) { options.insert(name, node); });
  }
}

void copy_dataset_options_to_data_keys(Experiment& e, const std::string& plugin) {
  if (plugin != kBundledPlugin) return;
  const Options& o = e.data.dataset_options;
  if (e.data.dataset_name == "cifar100") {
    e.data.label = *choice_named<CifarLabels>(o.string("label"));  // the option's rule allows only these words
  } else if (e.data.dataset_name == "synthetic") {
    e.data.synthetic_shape = o.integers("shape");
    e.data.synthetic_classes = o.integer("classes");
    e.data.synthetic_train_size = o.integer("train_size");
    e.data.synthetic_test_size = o.integer("test_size");
  }
}

std::string data_key_twin(const std::string& dataset_key) {
  for (const CopiedKey& k : kCopied)
    if (dataset_key == std::string("dataset.") + k.option) return std::string("data.") + k.data_key;
  return "";
}

}  // namespace plugtrain
