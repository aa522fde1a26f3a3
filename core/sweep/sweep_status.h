// `plugtrain sweep --status DIR`: each trial's state, read from the trials' own files and, for a
// sweep on Slurm, from squeue (and sacct where the cluster keeps accounting): pending, running,
// finished, failed with the reason, interrupted; with a rung scheduler, waiting at or stopped
// at a rung. Works while the sweep runs, here or on a cluster, and after.
#pragma once

#include <filesystem>
#include <iosfwd>

namespace plugtrain {

// DIR is the sweep folder (runs/<name>/sweep) or the experiment's folder above it. Returns the
// exit code: 0, or 1 when a trial failed.
int print_sweep_status(const std::filesystem::path& dir, std::ostream& out);

}  // namespace plugtrain
