// Where this process stands in a multi-process run: its rank, the world size, and where the
// rendezvous is. Read from the variables torchrun sets (RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_USE_AGENT_STORE), which our own
// launcher sets too; Slurm's and Open MPI's own rank variables are accepted in their place.
// Inside a Slurm step MASTER_ADDR and MASTER_PORT may be left out: the step's first node and
// 15000 + SLURM_JOB_ID % 17000 are used, the same for every task of the job.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "util/error.h"

namespace plugtrain {

class DistributedError : public Error {
 public:
  explicit DistributedError(const std::string& message) : Error(message) {}
};

struct World {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string master_addr;
  // Under Slurm without MASTER_ADDR: the step's first node, whose address is looked up when the
  // ranks connect (distributed/rendezvous_network.h); master_addr is then that node's name.
  std::string master_node;
  std::string node;  // SLURMD_NODENAME: this rank's Slurm node, named when it is lost (else empty)
  int master_port = 0;
  // torchrun's agent already serves the store at MASTER_ADDR:MASTER_PORT: every rank is a client.
  bool agent_store = false;
  std::string restart_count = "0";  // TORCHELASTIC_RESTART_COUNT (counts this agent's failures only)
  std::string source;               // "torchrun/env", "slurm", "open mpi": for messages
};

using Environment = std::map<std::string, std::string>;
Environment process_environment();

// nullopt when no launcher variables are set (a plain single-process run). Throws
// DistributedError naming the variable when one is set but wrong or a needed one is missing.
std::optional<World> world_from_environment(const Environment& env = process_environment());

}  // namespace plugtrain
