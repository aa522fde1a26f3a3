// Where the ranks of a multi-process run meet and which network interface they talk over.
//
// On a cluster a node's name need not resolve on the other nodes (Slurm reaches its nodes by
// NodeAddr), and a process's own hostname may resolve to 127.0.0.1, which Gloo would then bind
// to and hand to ranks on other machines. So the rendezvous host is resolved to an address once,
// the way Slurm itself reaches it, and every rank binds Gloo to the interface that carries its
// traffic to that address (NCCL is pointed at the same one).
#pragma once

#include <string>
#include <vector>

#include "distributed/world.h"

namespace plugtrain {

struct RendezvousNetwork {
  std::string address;           // the rendezvous host's IP address, as the ranks connect to it
  std::string address_source;    // how it was found: "MASTER_ADDR", "n1's NodeAddr", "n1 resolved"
  std::string interface;         // this host's interface for the ranks' traffic ("eth0", "lo")
  std::string interface_source;  // why that one: "distributed.interface", "GLOO_SOCKET_IFNAME", "carries 10.0.0.2"
};

// `asked`: the interface named by distributed.interface (empty: auto). Throws DistributedError
// in one line: a Slurm node with no address this rank can reach (naming the node and every way
// tried), an interface that does not exist here (listing those that do), no route to the address.
RendezvousNetwork find_rendezvous_network(const World& world, const std::string& asked);

struct NetworkInterface {
  std::string name;     // "eth0"
  std::string address;  // one of its IPv4 or IPv6 addresses (an interface with two is listed twice)
};

// This host's interfaces that have an address.
std::vector<NetworkInterface> network_interfaces();

// "eth0,eth1" (GLOO_SOCKET_IFNAME's way of naming several) -> {"eth0", "eth1"}.
std::vector<std::string> split_interfaces(const std::string& names);

// Sets GLOO_SOCKET_IFNAME to `network.interface` unless the user set it. core/ names no device
// library: the CUDA plugin passes it on as NCCL_SOCKET_IFNAME when it makes its collective.
void export_interface(const RendezvousNetwork& network);

}  // namespace plugtrain
