// `plugtrain run` with devices = N on one machine: starts N copies of this very command as
// worker processes (rank 0..N-1) with the variables torchrun would set, serves their
// rendezvous store itself (as torchrun's agent does), then watches them. When one fails, the others notice through their
// collectives and stop on their own; any still running after `grace` is killed. No worker
// outlives the launcher (they also die with it).
#pragma once

#include <chrono>
#include <iosfwd>
#include <string>
#include <vector>

namespace plugtrain {

struct LaunchRequest {
  std::vector<std::string> command;  // argv of the worker (this program and its arguments)
  int workers = 2;
  std::chrono::milliseconds grace{30000};
};

// A free TCP port on 127.0.0.1 (bound and released: another program may take it before the
// caller does; for launching by hand).
int free_local_port();

// Runs the workers to the end; returns the exit code for the launcher: 0 when every worker
// succeeded, else the first failing worker's code (128 + signal for a killed one).
int launch_local_workers(const LaunchRequest& request, std::ostream& log);

}  // namespace plugtrain
