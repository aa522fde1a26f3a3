// Reading a run's metrics.csv (core/train/callbacks/metrics_csv.cpp): one row per logged step
// ("step,<epoch>,<step>,<loss>,...") and per epoch, under a header that names the columns.
#pragma once

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "support/run_process.h"

namespace plugtrain::testing {

// The cells of each row of `kind` ("step" or "epoch"), in the order written.
inline std::vector<std::vector<std::string>> metrics_rows(const std::filesystem::path& csv, const std::string& kind) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(slurp(csv));
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(kind + ",", 0) != 0) continue;
    std::vector<std::string> cells;
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

// The loss of every logged step (train.log_interval = 1: every step), in order.
inline std::vector<double> step_losses(const std::filesystem::path& run_folder) {
  std::vector<double> losses;
  for (const auto& row : metrics_rows(run_folder / "metrics.csv", "step")) losses.push_back(std::stod(row.at(3)));
  return losses;
}

// The same as written, digit for digit: two runs meant to be bitwise alike compare equal.
inline std::vector<std::string> step_loss_texts(const std::filesystem::path& run_folder) {
  std::vector<std::string> losses;
  for (const auto& row : metrics_rows(run_folder / "metrics.csv", "step")) losses.push_back(row.at(3));
  return losses;
}

}  // namespace plugtrain::testing
