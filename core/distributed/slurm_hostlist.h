// The two compressed lists Slurm puts in a job step's environment, read as far as a rank needs:
// the first host of a node list (SLURM_STEP_NODELIST, SLURM_JOB_NODELIST: "node[01-04,07],gpu3"),
// where task 0 and so the rendezvous run, and one node's entry of a tasks-per-node list
// (SLURM_STEP_TASKS_PER_NODE, SLURM_TASKS_PER_NODE: "2(x3),1"), the local world size. Slurm
// writes them with its own hostlist code; the forms here are the ones it writes: comma-separated
// names, each with bracketed ranges of numbers whose zero padding is part of the name, e.g.
// n[009-011] is n009, n010, n011 (and rack[1-2]-n[01-04] for several dimensions).
#pragma once

#include <string>

#include "util/result.h"

namespace plugtrain {

// "node[01-04,07],gpu3" -> "node01". Refused with the reason for anything else (an unclosed
// bracket, an empty name, a range that is not numbers or runs backwards).
Result<std::string> first_slurm_host(const std::string& hostlist);

// The task count of node `node` (0-based, SLURM_NODEID) in "2(x3),1": 2 for nodes 0-2, 1 for
// node 3. Refused when the list is malformed or has no such node.
Result<int> slurm_tasks_on_node(const std::string& tasks_per_node, int node);

}  // namespace plugtrain
