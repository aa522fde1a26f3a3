// `plugtrain sweep exp.toml`: every trial of the [sweep] table validated up front, then each
// trained as a normal `plugtrain run` in its own folder (runs/<name>/sweep/<trial>/), N at a
// time; finished trials are skipped and interrupted ones resumed when the same command runs
// again; at the end, the report (sweep/sweep_report.h).
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

namespace plugtrain {

struct SweepRequest {
  std::filesystem::path experiment_file;
  std::vector<std::string> overrides;  // --set for every trial
  std::vector<std::filesystem::path> plugin_paths;
  int jobs = 0;          // trials at the same time; 0: one per device of the chosen backend (1 on the CPU)
  bool dry_run = false;  // list the trials, train none
  bool host_cpu_only = false;
  std::filesystem::path executable;  // the plugtrain binary each trial runs
};

// Returns the exit code: 0 when every trial finished, 130 when interrupted, 1 when a trial failed.
int run_sweep(const SweepRequest& request, std::ostream& out);

}  // namespace plugtrain
