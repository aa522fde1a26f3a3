// Reading a run folder as a user's tooling does: runs/<name>/version_<n>/ under the folder the
// run started in, and its summary.json.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "support/run_process.h"

namespace plugtrain::testing {

// runs/<name>/version_<n> under `dir`.
inline std::filesystem::path run_folder(const std::filesystem::path& dir, const std::string& name, int n) {
  return dir / "runs" / name / ("version_" + std::to_string(n));
}

// runs/<name>/version_<n>/summary.json under `dir`.
inline nlohmann::json run_summary(const std::filesystem::path& dir, const std::string& name, int n) {
  return nlohmann::json::parse(slurp(run_folder(dir, name, n) / "summary.json"));
}

// The run folder a run's log names ("run folder: runs/gpt/version_3"), under `dir`, where the run
// started; empty when the log names none.
inline std::filesystem::path run_folder_in_log(const std::string& log, const std::filesystem::path& dir) {
  const std::string key = "run folder: ";
  const auto at = log.find(key);
  if (at == std::string::npos) return {};
  return dir / log.substr(at + key.size(), log.find('\n', at) - at - key.size());
}

// A run folder's summary.json.
inline nlohmann::json summary_of(const std::filesystem::path& run_folder) {
  return nlohmann::json::parse(slurp(run_folder / "summary.json"));
}

}  // namespace plugtrain::testing
