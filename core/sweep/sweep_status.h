// `plugtrain sweep --status DIR`: each trial's state, read from the trials' own files and, for a
// sweep on Slurm, from squeue (and sacct where the cluster keeps accounting): pending, running,
// finished, failed with the reason, interrupted; with a rung scheduler, waiting at or stopped
// at a rung. Works while the sweep runs, here or on a cluster, and after.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace plugtrain {

struct TrialStatus {
  std::string name;    // the trial's folder name
  std::string label;   // its overrides, "optim.lr=0.01 seed=1"
  std::string state;   // pending, running, finished, failed, interrupted, waiting, stopped, promoted
  std::string detail;  // why, or how far ("" when the state says it all)
  std::string nodes;   // on Slurm, the nodes its newest array task ran on ("n[1-2]"; "" before it started)
};

struct SweepStatus {
  std::filesystem::path folder;       // the sweep folder (runs/<name>/sweep)
  std::filesystem::path experiment;   // the experiment file the sweep was started with
  std::string schedule;               // the rung scheduler in one line ("" without one)
  bool slurm_unanswered = false;      // a sweep on Slurm whose squeue did not answer
  std::vector<TrialStatus> trials;    // in the sweep's order
  std::map<std::string, int> counts;  // state -> trials in it

  bool any_failed() const { return counts.count("failed") > 0; }
};

// DIR is the sweep folder (runs/<name>/sweep) or the experiment's folder above it.
SweepStatus read_sweep_status(const std::filesystem::path& dir);

// The status as lines, or as one JSON object (`sweep --status DIR --json`).
void print_sweep_status(const SweepStatus& status, std::ostream& out);
nlohmann::json sweep_status_json(const SweepStatus& status);

}  // namespace plugtrain
