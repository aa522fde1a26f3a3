// `plugtrain doctor`'s network section: what this node sees of a multi-process run's network —
// its interfaces and addresses and, when a launcher started it (Slurm's srun, torchrun), the
// world it is in and where its ranks would meet (the address, how it was found, and the interface
// Gloo and NCCL would use), or the one line that says why they could not. Run under
// `srun -N 2 plugtrain doctor --json`, each node answers for itself.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "distributed/rendezvous_network.h"
#include "distributed/world.h"

namespace plugtrain {

struct NodeNetwork {
  std::string host;  // this machine's name
  std::vector<NetworkInterface> interfaces;
  std::optional<World> world;                   // nullopt: no launcher variables
  std::optional<RendezvousNetwork> rendezvous;  // where the ranks meet, when there is a world
  std::string problem;                          // why the world or the rendezvous cannot be found
};

// `interface`: distributed.interface (empty: auto), as a run would ask.
NodeNetwork node_network(const std::string& interface = "");

void print_node_network(const NodeNetwork& n, std::ostream& out);
nlohmann::json node_network_json(const NodeNetwork& n);

}  // namespace plugtrain
