// `plugtrain check-backend NAME`: a backend plugin checked against the host CPU, case by case,
// in the spirit of ggml's test-backend-ops. Everything goes through the SDK (BackendHandle and
// the backend's Capabilities): the command knows no backend by name.
//
// The checks, in order, each PASS, FAIL or SKIP (with the reason) and a one-line detail:
//   backend      its answers agree with each other (conformance_contract.cpp): capabilities and
//                the multi-device plan, two fresh probes, memory figures and the peak, loader
//                settings
//   transfer     host <-> device round trips are bit-exact for each dtype it claims
//                (conformance_transfers.cpp)
//   op           forward and backward of the operators the bundled models use, against the
//                CPU (conformance_operators.cpp)
//   optimizer    the fused and _foreach_ kernels the trainer issues, against the CPU
//                (conformance_optimizer_kernels.cpp)
//   model        one SGD step of each registered model, against the CPU
//                (conformance_models.cpp)
//   checkpoint   the host's checkpoint written from the device, read on the CPU, written
//                again and read back on the device: bit-exact (conformance_checkpoint.cpp)
// The report (conformance_report.cpp) is a table or one JSON document.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace plugtrain {

struct ConformanceRequest {
  std::string backend;  // a backend plugin's name
  std::vector<std::filesystem::path> plugin_paths;
  // Also train the models above the size the check trains by default (conformance_models.cpp).
  bool all_models = false;
  // Only these groups of checks (conformance_groups()); empty: all of them.
  std::vector<std::string> groups;
};

// The groups of checks, in the order they run: backend, transfer, op, optimizer, model, checkpoint.
const std::vector<std::string>& conformance_groups();

enum class CheckStatus { pass, fail, skip };
const char* to_string(CheckStatus status);  // "PASS", "FAIL", "SKIP"

struct CheckResult {
  std::string group;  // backend, transfer, op, optimizer, model, checkpoint
  std::string name;   // e.g. "conv2d", "float32", "resnet18"
  CheckStatus status = CheckStatus::pass;
  std::string detail;  // one line: what was compared and how close, or why not
  double seconds = 0;
};

struct ConformanceReport {
  std::string backend;
  std::string device;       // as LibTorch writes it: "cpu", "privateuseone:0"
  std::string device_name;  // the probe's name for it
  std::vector<CheckResult> checks;
  // Operators that fell back to the host CPU while the checks ran (SDK 3.4), with how often.
  std::map<std::string, std::uint64_t> cpu_fallbacks;
  double seconds = 0;
  bool ok() const;  // no check failed
};

// Throws Error(exit_bad_input) when no backend has that name (the line lists the known ones) or
// a group is not one of conformance_groups(), and Error when the backend's plugin did not load or its probe says it is
// not usable.
ConformanceReport check_backend(const ConformanceRequest& request);

void print_conformance(const ConformanceReport& report, std::ostream& out);
nlohmann::json conformance_json(const ConformanceReport& report);

}  // namespace plugtrain
