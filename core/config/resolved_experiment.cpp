#include "config/resolved_experiment.h"

#include <sstream>

#include <toml++/toml.h>

#include "config/experiment_schema.h"
#include "config/toml_text.h"
#include "util/text.h"
#include "version.h"

namespace plugtrain {

namespace {

const ConfigKey* schema_key(const std::string& path) {
  for (const ConfigKey& k : experiment_schema())
    if (k.path == path) return &k;
  return nullptr;
}

// Keys compared on resume: every key of the schema that may not change, and every model
// option. A key the schema no longer has (written by an older plugtrain) means nothing now.
bool compared_on_resume(const std::string& table, const std::string& path) {
  if (table == "model" || table == "task" || table == "dataset") return true;
  const ConfigKey* k = schema_key(path);
  return k && !k->may_change_on_resume;
}

}  // namespace

std::string resolved_toml(const Experiment& e, const std::map<std::string, std::string>& decided) {
  std::string source = e.source;  // a comment line: no line break may end it early
  for (char& c : source)
    if (static_cast<unsigned char>(c) < 0x20) c = '?';
  std::string out = "# resolved by plugtrain " PLUGTRAIN_VERSION " from " + source + "\n";
  std::string table;
  for (const ConfigKey& k : experiment_schema()) {
    const std::string t = k.path.substr(0, k.path.find('.'));
    if (t != table) {
      out += "\n[" + t + "]\n";
      table = t;
      if (t == "model")
        for (const auto& [name, value] : e.model.options.values()) out += name + " = " + toml_text(value) + "\n";
      if (t == "task")
        for (const auto& [name, value] : e.task.options.values()) out += name + " = " + toml_text(value) + "\n";
    }
    const auto d = decided.find(k.path);
    out += k.path.substr(t.size() + 1) + " = " + (d != decided.end() ? d->second : k.default_text(e)) + "\n";
  }
  for (const auto& [logger, options] : e.logging.options) {  // each logger's table, whole
    out += "\n[logging." + logger + "]\n";
    for (const auto& [name, value] : options.values()) out += name + " = " + toml_text(value) + "\n";
  }
  if (!e.data.dataset_options.values().empty()) {  // a plugin data set's options
    out += "\n[dataset]\n";
    for (const auto& [name, value] : e.data.dataset_options.values()) out += name + " = " + toml_text(value) + "\n";
  }
  return out;
}

std::optional<std::int64_t> recorded_integer(const std::string& record, const std::string& key_path) {
  try {
    const toml::table t = toml::parse(record);
    return t.at_path(key_path).value<std::int64_t>();
  } catch (const toml::parse_error&) {
    return std::nullopt;
  }
}

Status resume_compatible(const std::string& saved, const std::string& current) {
  toml::table before, now;
  try {
    before = toml::parse(saved);
    now = toml::parse(current);
  } catch (const toml::parse_error& e) {  // written by a plugtrain that did not escape every string
    return WhyNot{"its record of the experiment cannot be read (" + std::string(e.description()) +
                  "); resume it with the plugtrain that wrote it"};
  }
  // Checkpoints from before ddp ran one process: their global batch was the batch size.
  if (!before.at_path("data.global_batch_size") && before.at_path("data.batch_size").is_integer())
    if (auto* data = before["data"].as_table())
      data->insert("global_batch_size", *before.at_path("data.batch_size").value<std::int64_t>());
  std::vector<std::string> differences;
  for (auto&& [table_name, table] : before) {
    if (!table.is_table()) continue;
    for (auto&& [key, value] : *table.as_table()) {
      const std::string path = std::string(table_name.str()) + "." + std::string(key.str());
      if (!compared_on_resume(std::string(table_name.str()), path)) continue;
      const std::string was = toml_text(value);
      const toml::node* n = now.at_path(path).node();
      const std::string is = n ? toml_text(*n) : "unset";
      if (was != is) differences.push_back(path + " " + was + " -> " + is);
    }
  }
  if (!differences.empty())
    return WhyNot{"this experiment differs from the one that wrote the checkpoint (" + join(differences) +
                  "); resuming would not continue that run"};
  return Status::fine();
}

}  // namespace plugtrain
