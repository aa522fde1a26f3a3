// `plugtrain doctor`: is this machine ready to train, and on what? Versions, the system, every
// plugin with its probe, then a smoke test on every usable backend (or the one an experiment
// would choose): a tiny model trained on one batch for two epochs, whose loss must fall; with
// two or more devices, the same through the backend's multi-device strategy. The guides'
// test_setup.py, test_gpu_setup.py and test_multi_gpu.py in one command.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diagnose/node_network.h"

#include "plugins/plugin_permissions.h"

namespace plugtrain {

struct DoctorRequest {
  std::optional<std::filesystem::path> experiment_file;  // judge only the backend it would choose
  std::vector<std::string> overrides;
  std::vector<std::filesystem::path> plugin_paths;
};

struct SmokeTest {
  std::string backend;
  std::string what;  // "1 device", "2 devices (dp)"
  bool passed = false;
  double first_loss = 0, last_loss = 0;
  double seconds = 0;
  std::string reason;  // why it failed (one line)
  std::map<std::string, std::uint64_t> cpu_fallbacks;  // operators it ran on the CPU, with calls
};

// One entry of the plugin search path and who could change it (a problem: its plugins are refused
// unless --allow-insecure-plugins).
struct SearchPathCheck {
  std::string origin;
  std::string ignored;  // why it is not searched at all
  PathOwnership ownership;
};

struct DoctorReport {
  std::vector<std::pair<std::string, std::string>> versions, system;
  std::vector<SearchPathCheck> search_path;
  std::string plugins_table;
  nlohmann::json plugins_json;
  std::vector<SmokeTest> smoke_tests;
  NodeNetwork network;  // this node's interfaces and, under a launcher, where its ranks meet
  std::string judged;   // the backend an experiment would choose; empty: every usable backend
  bool ok = false;
  std::string verdict;  // one line
};

DoctorReport run_doctor(const DoctorRequest& request);
void print_doctor(const DoctorReport& report, std::ostream& out);
nlohmann::json doctor_json(const DoctorReport& report);

}  // namespace plugtrain
