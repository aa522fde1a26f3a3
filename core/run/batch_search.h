// data.batch_size = "auto" (part of the trial stage, run/trials.h): the largest power of two, up to
// data.max_batch_size and the training set, whose trial steps fit the chosen device's memory
// with data.memory_headroom to spare. The run's trial steps (run/trial_steps.h) are built once;
// each candidate batch trains two steps with the device's peak reset before them, and fits
// when no out-of-memory error came and the peak stayed inside the budget.
//
// Two small batches give memory per sample, from which the largest fitting power of two is
// predicted and then tried for real: one that fits is doubled while the doubled one fits too,
// one that does not is narrowed by binary search between the last that fit and it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace plugtrain {

struct ValidatedRun;
struct RunPlan;

struct BatchTrial {
  std::int64_t batch = 0;
  bool fits = false;
  std::optional<std::uint64_t> peak_bytes;  // the device's peak during the trial steps
  std::string why;                          // why it does not fit (out of memory, over budget)
};

struct BatchSearch {
  std::int64_t chosen = 0;                  // per device
  std::optional<std::uint64_t> budget_bytes;
  std::vector<BatchTrial> trials;           // in the order they ran
  std::vector<std::string> lines;           // for a person: budget, every trial, the decision
};

// `plan`: the run's plan so far (backend, devices, processes). Throws Error when not even
// data.min_batch_size fits.
BatchSearch search_batch_size(const ValidatedRun& run, const RunPlan& plan);

}  // namespace plugtrain
