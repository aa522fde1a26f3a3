#include "config/dataset_keys.h"

#include <algorithm>
#include <string>
#include <utility>

#include "config/config_error.h"
#include "config/toml_text.h"

namespace plugtrain {

namespace {

// The [data] key and the option it became.
const std::pair<const char*, const char*> kCopied[] = {
    {"label", "label"},
    {"synthetic_shape", "shape"},
    {"synthetic_classes", "classes"},
    {"synthetic_train_size", "train_size"},
    {"synthetic_test_size", "test_size"},
};

}  // namespace

void copy_data_keys_to_dataset(ExperimentFile& file, const std::vector<OptionSpec>& options) {
  const toml::table* data = file.table["data"].as_table();
  if (!data) return;
  for (const auto& [data_key, option] : kCopied) {
    const toml::node* value = data->get(data_key);
    const bool declared = std::any_of(options.begin(), options.end(), [&](const OptionSpec& o) { return o.name == option; });
    if (!value || !declared) continue;
    if (!file.table.contains("dataset")) file.table.insert("dataset", toml::table{});
    toml::table& dataset = *file.table["dataset"].as_table();
    if (const toml::node* given = dataset.get(option)) {
      if (toml_text(*given) != toml_text(*value))
        throw ConfigError(key_location(file, std::string("data.") + data_key) + ": data." + data_key + " = " +
                          toml_text(*value) + " and dataset." + option + " = " + toml_text(*given) +
                          " set the same option; keep one");
      continue;
    }
    value->visit([&dataset, name = option](auto&& node) { dataset.insert(name, node); });
  }
}

}  // namespace plugtrain
