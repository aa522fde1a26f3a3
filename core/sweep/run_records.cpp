#include "sweep/run_records.h"

#include <algorithm>
#include <limits>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "config/choices.h"
#include "config/dataset_keys.h"
#include "config/experiment_schema.h"
#include "config/toml_text.h"
#include "run/run_folder.h"
#include "task/task_registry.h"
#include "util/error.h"

namespace plugtrain {

namespace {

// The headline metric's direction: summary.json's "metric_direction"; runs written before it
// (tasks without the key, or before tasks) by the task's own metric, accuracy upwards.
bool higher_is_better(const nlohmann::json& summary, const std::string& metric) {
  if (const auto it = summary.find("metric_direction"); it != summary.end() && it->is_string())
    if (const auto direction = choice_named<Direction>(it->get<std::string>())) return *direction == Direction::max;
  if (const TaskDefinition* task = find_task(summary.value("task", std::string("classification"))))
    for (const TaskMetric& m : task->evaluation_metrics)
      if (m.name == metric) return m.goal == MetricGoal::maximize;
  return true;
}

}  // namespace

namespace fs = std::filesystem;

namespace {

std::map<std::string, std::string> flat_settings(const fs::path& file) {
  std::map<std::string, std::string> out;
  toml::table t;
  try {
    t = toml::parse_file(file.string());
  } catch (const toml::parse_error& e) {
    throw Error(file.string() + ": cannot be read: " + std::string(e.description()));
  }
  for (auto&& [table, node] : t)
    if (const toml::table* keys = node.as_table())
      for (auto&& [key, value] : *keys) {
        out[std::string(table.str()) + "." + std::string(key.str())] = toml_text(value);
      }
  return out;
}

void read_epochs(const fs::path& csv, RunRecord& r) {
  const std::map<std::int64_t, std::vector<std::string>> rows = metrics_epoch_rows(csv);
  double seconds = 0, throughput = 0;
  bool has_loss = false;
  for (const auto& [epoch, cells] : rows) {
    if (!cells[6].empty()) r.test_metric.emplace_back(epoch, std::stod(cells[6]));
    if (!cells[5].empty()) {
      const double loss = std::stod(cells[5]);
      r.best_test_loss = has_loss ? std::min(r.best_test_loss, loss) : loss;
      has_loss = true;
    }
    throughput += std::stod(cells[8]);
    seconds += std::stod(cells[9]);
  }
  r.epochs = std::int64_t(rows.size());
  r.seconds = seconds;
  if (!rows.empty()) {
    r.seconds_per_epoch = seconds / double(rows.size());
    r.samples_per_second = throughput / double(rows.size());
  }
}

}  // namespace

std::vector<std::string> metrics_columns(const fs::path& csv) {
  std::ifstream in(csv);
  std::string header;
  std::getline(in, header);
  std::vector<std::string> names;
  std::stringstream s(header);
  for (std::string cell; std::getline(s, cell, ',');) names.push_back(cell);
  if (names.size() > 4) {
    names[3] = "train_loss";
    names[4] = "train_" + names[4];
  }
  return names;
}

std::map<std::int64_t, std::vector<std::string>> metrics_epoch_rows(const fs::path& csv) {
  std::ifstream in(csv);
  std::map<std::int64_t, std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("epoch,", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream s(line);
    for (std::string cell; std::getline(s, cell, ',');) cells.push_back(cell);
    // Ten cells, the last a number: a row still being written has fewer, or a cut last cell.
    if (cells.size() < 10 || cells[9].empty()) continue;
    try {
      rows[std::stoll(cells[1])] = cells;
    } catch (const std::logic_error&) {  // a row a crash cut short: not a row
    }
  }
  return rows;
}

std::vector<RunRecord> read_run_records(const fs::path& root) {
  if (!fs::is_directory(root)) throw Error(root.string() + ": no such folder");
  // Every run folder (version_N) holding a summary: each is a run of its own.
  std::vector<fs::path> folders;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it)
    if (it->path().filename() == "summary.json" && run_version(it->path().parent_path()) >= 0)
      folders.push_back(it->path().parent_path());
  std::vector<RunRecord> runs;
  for (const fs::path& folder : folders) {
    RunRecord r;
    r.folder = folder;
    nlohmann::json s;
    try {
      s = nlohmann::json::parse(std::ifstream(folder / "summary.json"));
    } catch (const std::exception& e) {
      throw Error((folder / "summary.json").string() + ": not valid JSON: " + e.what());
    }
    // A diverged run writes NaN as null: it reads back as NaN, not as an error.
    auto number = [&](const std::string& key) {
      const auto it = s.find(key);
      return it != s.end() && it->is_number() ? it->get<double>() : std::numeric_limits<double>::quiet_NaN();
    };
    r.interrupted = s.value("interrupted", false);
    r.paused = s.value("paused", false);
    // The task's headline metric (summary.json's "metric"; runs from before tasks: accuracy).
    r.metric = s.value("metric", std::string("accuracy"));
    r.higher_is_better = higher_is_better(s, r.metric);
    r.selection_split = s.value("selection_split", std::string("test"));
    r.test_is_val = s.value("test_is_val", false);
    r.best_selected_metric = number("best_" + r.selection_split + "_" + r.metric);
    r.final_selected_metric = number("final_" + r.selection_split + "_" + r.metric);
    r.final_test_metric = number("final_test_" + r.metric);
    r.final_test_loss = number("final_test_loss");
    if (const auto t = s.find("final_test");
        t != s.end() && t->is_object() && t->contains("bits_per_byte") && (*t)["bits_per_byte"].is_number())
      r.final_test_bits_per_byte = (*t)["bits_per_byte"].get<double>();
    if (fs::exists(folder / "experiment.toml")) r.settings = flat_settings(folder / "experiment.toml");
    read_epochs(folder / "metrics.csv", r);
    runs.push_back(std::move(r));
  }
  std::sort(runs.begin(), runs.end(), [](const RunRecord& a, const RunRecord& b) { return a.folder < b.folder; });
  return runs;
}

std::vector<std::string> varied_keys(const std::vector<RunRecord>& runs) {
  std::set<std::string> all;
  for (const auto& r : runs)
    for (const auto& [k, v] : r.settings) all.insert(k);
  std::vector<std::string> varied;
  for (const auto& key : all) {
    // Where a run wrote and how many threads it used do not make it another experiment.
    // Nor where it logged to ([logging], and its loggers' tables).
    if (key == "experiment.name" || key == "experiment.output" || key == "train.threads" ||
        key.rfind("logging.", 0) == 0)
      continue;
    std::set<std::string> values;
    for (const auto& r : runs) {
      auto it = r.settings.find(key);
      values.insert(it == r.settings.end() ? "" : it->second);
    }
    if (values.size() > 1) varied.push_back(key);
  }
  // A bundled data set's option written back to its [data] key (config/dataset_keys.h) varies
  // with it: one column.
  const std::set<std::string> data_keys(varied.begin(), varied.end());
  varied.erase(std::remove_if(varied.begin(), varied.end(),
                              [&](const std::string& key) { return data_keys.count(data_key_twin(key)) > 0; }),
               varied.end());
  // Schema order reads as the experiment file does; model options (not in the schema) last.
  auto rank = [](const std::string& key) {
    const auto& schema = experiment_schema();
    for (std::size_t i = 0; i < schema.size(); ++i)
      if (schema[i].path == key) return i;
    return schema.size();
  };
  std::stable_sort(varied.begin(), varied.end(), [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  return varied;
}

}  // namespace plugtrain
