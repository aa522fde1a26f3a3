// What the MLflow tests check of a run read back through MLflow's own client (tests/loggers):
// every figure of metrics.csv at its step, once; and the [logging.mlflow] table they write.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/metrics_csv.h"
#include "support/run_process.h"

namespace plugtrain::testing {

// The key a metrics.csv column of a row of `kind` is logged under (core/train/callbacks/plugin_loggers.cpp).
inline std::string logged_key(const std::string& kind, const std::string& column, std::size_t index) {
  if (kind == "step") return "train/" + std::string(column == "loss" ? "loss_step" : column);
  if (column == "loss") return "epoch/train_loss";
  if (index == 4) return "epoch/train_" + column;  // the training headline's column is its bare name
  return "epoch/" + column;
}

// metrics.csv as (key, step) -> value: the last row of each step and kind stands (a late test
// rewrites its epoch's row).
inline std::map<std::pair<std::string, std::int64_t>, double> csv_figures(const std::filesystem::path& csv) {
  std::istringstream lines(slurp(csv));
  std::string header_line;
  std::getline(lines, header_line);
  std::vector<std::string> header;
  std::istringstream h(header_line);
  for (std::string c; std::getline(h, c, ',');) header.push_back(c);
  std::map<std::pair<std::string, std::int64_t>, double> figures;
  for (const std::string kind : {"step", "epoch"})
    for (const auto& row : metrics_rows(csv, kind))
      for (std::size_t i = 3; i < row.size() && i < header.size(); ++i)
        if (!row[i].empty()) figures[{logged_key(kind, header[i], i), std::stoll(row[2])}] = std::stod(row[i]);
  return figures;
}

inline bool is_timing(const std::string& key) {
  return key.find("samples_per_second") != std::string::npos || key == "epoch/seconds";
}

// Every figure of metrics.csv is in the run's history at its step with its value, and no key has
// a step twice. metrics.csv prints 9 significant digits, so the two agree to 5e-9 of the value.
// `timings`: compare the timings' values too (a replay after a resume measures its own, and the
// server keeps those of the first attempt).
inline void expect_metrics_equal_csv(const nlohmann::json& run, const std::filesystem::path& csv, bool timings = true) {
  const auto figures = csv_figures(csv);
  ASSERT_FALSE(figures.empty());
  std::map<std::pair<std::string, std::int64_t>, double> logged;
  for (const auto& [key, history] : run["metrics"].items()) {
    std::set<std::int64_t> steps;
    for (const auto& point : history) {
      EXPECT_TRUE(steps.insert(point[0].get<std::int64_t>()).second) << key << " has step " << point[0] << " twice";
      if (point[1].is_number()) logged[{key, point[0].get<std::int64_t>()}] = point[1].get<double>();
    }
  }
  for (const auto& [at, value] : figures) {
    const auto it = logged.find(at);
    ASSERT_NE(it, logged.end()) << at.first << " at step " << at.second << " was not logged";
    if (!timings && is_timing(at.first)) continue;
    EXPECT_NEAR(it->second, value, 5e-9 * std::abs(value) + 1e-300) << at.first << " at step " << at.second;
  }
  for (const auto& [at, value] : logged)  // nothing beyond the rows, for the keys metrics.csv has
    if (at.first.rfind("train/", 0) == 0 || at.first.rfind("epoch/train", 0) == 0 ||
        at.first.rfind("epoch/test", 0) == 0)
      EXPECT_TRUE(figures.count(at)) << at.first << " at step " << at.second << " is not a row of metrics.csv";
}

inline std::string mlflow_table(const std::string& uri, const std::string& experiment, const std::string& extra = "") {
  return "\n[logging.mlflow]\nuri = \"" + uri + "\"\nexperiment = \"" + experiment + "\"\n" + extra;
}

}  // namespace plugtrain::testing
