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

}  // namespace plugtrain::testing
