// The groups of checks `check-backend` runs, one file each; conformance.cpp runs them in this
// order. Each returns its rows, every row already timed (run_check).
#pragma once

#include <vector>

#include "diagnose/conformance_compare.h"

namespace plugtrain {

// conformance_contract.cpp: the backend's answers agree with each other and with the SDK's
// rules: "plan <strategy>" for single, dp and ddp, "probe", "memory figures", "memory peak",
// "loader settings".
std::vector<CheckResult> check_contract(ConformanceTarget& target);

// conformance_transfers.cpp: host -> device -> host is bit-exact, per dtype.
std::vector<CheckResult> check_transfers(ConformanceTarget& target);

// conformance_operators.cpp: forward and backward against the CPU, per operator.
std::vector<CheckResult> check_operators(ConformanceTarget& target);

// conformance_optimizer_kernels.cpp: the fused and _foreach_ kernels the trainer's optimizers
// and precisions issue, against the CPU.
std::vector<CheckResult> check_optimizer_kernels(ConformanceTarget& target);

// conformance_models.cpp: one SGD step of each registered model, against the CPU.
std::vector<CheckResult> check_models(ConformanceTarget& target, bool all_models);

// conformance_checkpoint.cpp: the host's checkpoint, device -> CPU -> device, bit-exact.
std::vector<CheckResult> check_checkpoint(ConformanceTarget& target);

}  // namespace plugtrain
