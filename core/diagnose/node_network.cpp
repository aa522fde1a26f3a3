#include "diagnose/node_network.h"

#include <unistd.h>

#include "util/text.h"

namespace plugtrain {

NodeNetwork node_network(const std::string& interface) {
  NodeNetwork n;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) n.host = host;
  n.interfaces = network_interfaces();
  try {
    n.world = world_from_environment();
    if (n.world && n.world->world_size > 1) n.rendezvous = find_rendezvous_network(*n.world, interface);
  } catch (const std::exception& e) { n.problem = first_line(e.what()); }
  return n;
}

void print_node_network(const NodeNetwork& n, std::ostream& out) {
  out << "network (what this node sees of a multi-process run)\n  host: " << n.host << "\n  interfaces:";
  for (const NetworkInterface& i : n.interfaces) out << " " << i.name << " " << i.address << ";";
  out << "\n";
  if (n.world)
    out << "  world: rank " << n.world->rank << " of " << n.world->world_size << " (" << n.world->source
        << (n.world->node.empty() ? "" : ", node " + n.world->node) << ")\n";
  else
    out << "  world: none (no launcher variables: a single-process run)\n";
  if (n.rendezvous)
    out << "  rendezvous: " << n.rendezvous->address << " (" << n.rendezvous->address_source << ") over "
        << n.rendezvous->interface << " (" << n.rendezvous->interface_source << ")\n";
  if (!n.problem.empty()) out << "  PROBLEM: " << n.problem << "\n";
}

nlohmann::json node_network_json(const NodeNetwork& n) {
  nlohmann::json j = {{"host", n.host}, {"interfaces", nlohmann::json::array()}};
  for (const NetworkInterface& i : n.interfaces) j["interfaces"].push_back({{"name", i.name}, {"address", i.address}});
  j["world"] = n.world ? nlohmann::json{{"rank", n.world->rank},
                                        {"world_size", n.world->world_size},
                                        {"local_rank", n.world->local_rank},
                                        {"node", n.world->node},
                                        {"source", n.world->source}}
                       : nlohmann::json(nullptr);
  j["rendezvous"] = n.rendezvous ? nlohmann::json{{"address", n.rendezvous->address},
                                                  {"address_source", n.rendezvous->address_source},
                                                  {"interface", n.rendezvous->interface},
                                                  {"interface_source", n.rendezvous->interface_source}}
                                 : nlohmann::json(nullptr);
  j["problem"] = n.problem.empty() ? nlohmann::json(nullptr) : nlohmann::json(n.problem);
  return j;
}

}  // namespace plugtrain
