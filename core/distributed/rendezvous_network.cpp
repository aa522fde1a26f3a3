#include "distributed/rendezvous_network.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <regex>
#include <tuple>
#include <vector>

#include "util/text.h"

namespace plugtrain {

namespace {

std::string numeric_address(const sockaddr* address) {
  char text[INET6_ADDRSTRLEN] = {};
  const void* raw = address->sa_family == AF_INET
                        ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(address)->sin_addr)
                        : static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr);
  return inet_ntop(address->sa_family, raw, text, sizeof text) ? text : "";
}

// `host`'s address from the system's resolver (an IPv4 one when it has both).
Result<std::string> resolve(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found); rc != 0)
    return WhyNot{host + ": " + ::gai_strerror(rc)};
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> owned(found, ::freeaddrinfo);
  std::string best;
  for (const addrinfo* a = found; a; a = a->ai_next) {
    if (a->ai_family != AF_INET && a->ai_family != AF_INET6) continue;
    if (best.empty() || a->ai_family == AF_INET) best = numeric_address(a->ai_addr);
    if (a->ai_family == AF_INET) break;
  }
  if (best.empty()) return WhyNot{host + ": no IPv4 or IPv6 address"};
  return best;
}

// Slurm's own way to a node: `scontrol show node NAME`'s NodeAddr. A name that Slurm would not
// accept is not passed to a shell.
Result<std::string> slurm_node_addr(const std::string& node) {
  if (node.empty() ||
      node.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != std::string::npos)
    return WhyNot{"scontrol not asked: '" + shortened(node, 80) + "' is not a node name"};
  const std::string command = "scontrol show node -o " + node + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return WhyNot{"scontrol show node " + node + ": cannot start it: " + std::strerror(errno)};
  std::string out;
  char buffer[4096];
  while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  const int status = ::pclose(pipe);
  if (status != 0 && WIFEXITED(status) && WEXITSTATUS(status) == 127)
    return WhyNot{"scontrol show node " + node + ": scontrol is not installed here"};
  std::smatch m;
  if (status != 0 || !std::regex_search(out, m, std::regex("NodeAddr=(\\S+)")))
    return WhyNot{"scontrol show node " + node + ": " + shortened(first_line(out.empty() ? "no answer" : out), 200)};
  const std::string addr = m[1].str();
  Result<std::string> resolved = resolve(addr);
  if (!resolved)
    return WhyNot{"scontrol show node " + node + ": NodeAddr=" + addr + ", which does not resolve (" +
                  resolved.why_not() + ")"};
  return resolved;
}

// The rendezvous host's address and how it was found.
std::pair<std::string, std::string> rendezvous_address(const World& world) {
  if (world.master_node.empty()) {
    Result<std::string> address = resolve(world.master_addr);
    if (!address)
      throw DistributedError("rank " + std::to_string(world.rank) + ": the rendezvous host MASTER_ADDR=" +
                             world.master_addr + " does not resolve: " + address.why_not());
    return {address.value(), "MASTER_ADDR"};
  }
  const std::string& node = world.master_node;
  Result<std::string> by_slurm = slurm_node_addr(node);
  if (by_slurm) return {by_slurm.value(), node + "'s NodeAddr"};
  Result<std::string> by_name = resolve(node);
  if (by_name) return {by_name.value(), node + " resolved"};
  throw DistributedError("rank " + std::to_string(world.rank) + ": the rendezvous node " + node +
                         " (the step's first) has no address this rank can reach: " + by_slurm.why_not() +
                         "; the resolver: " + by_name.why_not() + " (set MASTER_ADDR to its address)");
}

}  // namespace

std::vector<NetworkInterface> network_interfaces() {
  std::vector<NetworkInterface> found;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return found;
  for (const ifaddrs* i = list; i; i = i->ifa_next)
    if (i->ifa_addr && (i->ifa_addr->sa_family == AF_INET || i->ifa_addr->sa_family == AF_INET6))
      found.push_back({i->ifa_name, numeric_address(i->ifa_addr)});
  ::freeifaddrs(list);
  return found;
}

namespace {

std::string interface_names() {
  std::vector<std::string> names;
  for (const NetworkInterface& i : network_interfaces())
    if (std::find(names.begin(), names.end(), i.name) == names.end()) names.push_back(i.name);
  return names.empty() ? "none" : join(names);
}

// The interface this host sends from to reach `address`: the kernel's route, read by
// connecting a UDP socket (which sends nothing) and asking which local address it got.
std::string interface_towards(const std::string& address, const World& world) {
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICHOST;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(address.c_str(), std::to_string(world.master_port).c_str(), &hints, &found) != 0)
    throw DistributedError("rank " + std::to_string(world.rank) + ": '" + address + "' is not an IP address");
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> owned(found, ::freeaddrinfo);
  const int fd = ::socket(found->ai_family, SOCK_DGRAM, 0);
  sockaddr_storage local{};
  socklen_t length = sizeof local;
  const bool routed = fd >= 0 && ::connect(fd, found->ai_addr, found->ai_addrlen) == 0 &&
                      ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) == 0;
  const std::string why = std::strerror(errno);
  if (fd >= 0) ::close(fd);
  if (!routed)
    throw DistributedError("rank " + std::to_string(world.rank) +
                           ": this host has no route to the rendezvous address " + address + ": " + why);
  const std::string source = numeric_address(reinterpret_cast<const sockaddr*>(&local));
  for (const NetworkInterface& i : network_interfaces())
    if (i.address == source) return i.name;
  throw DistributedError("rank " + std::to_string(world.rank) + ": no interface of this host has the address " +
                         source + ", which it sends from to reach " + address + " (interfaces: " + interface_names() +
                         ")");
}

void check_interfaces_exist(const std::string& names, const std::string& source, const World& world) {
  for (const std::string& name : split_interfaces(names))
    if (name.empty() || ::if_nametoindex(name.c_str()) == 0)
      throw DistributedError("rank " + std::to_string(world.rank) + ": " + source + " = \"" + shortened(name, 80) +
                             "\" names no network interface on this host" +
                             (world.node.empty() ? "" : " (" + world.node + ")") + "; it has " + interface_names());
}

}  // namespace

std::vector<std::string> split_interfaces(const std::string& names) {
  std::vector<std::string> list;
  std::size_t start = 0;
  for (std::size_t comma; (comma = names.find(',', start)) != std::string::npos; start = comma + 1)
    list.push_back(names.substr(start, comma - start));
  list.push_back(names.substr(start));
  return list;
}

RendezvousNetwork find_rendezvous_network(const World& world, const std::string& asked) {
  RendezvousNetwork network;
  std::tie(network.address, network.address_source) = rendezvous_address(world);
  const char* from_environment = std::getenv("GLOO_SOCKET_IFNAME");
  if (!asked.empty()) {
    check_interfaces_exist(asked, "distributed.interface", world);
    network.interface = asked;
    network.interface_source = "distributed.interface";
  } else if (from_environment && *from_environment) {
    check_interfaces_exist(from_environment, "GLOO_SOCKET_IFNAME", world);
    network.interface = from_environment;
    network.interface_source = "GLOO_SOCKET_IFNAME";
  } else {
    network.interface = interface_towards(network.address, world);
    network.interface_source = "its route to " + network.address;
  }
  return network;
}

void export_interface(const RendezvousNetwork& network) {
  // setenv's last argument 0: a variable the user set stays as it is. A backend's own collective
  // takes the same interface from it (the CUDA plugin gives it to its collective library).
  ::setenv("GLOO_SOCKET_IFNAME", network.interface.c_str(), 0);
}

}  // namespace plugtrain
