// Where the ranks meet and which interface they use, on this machine's own network (the
// cluster's cases, with node names that resolve nowhere, are in multinode_slurm_test.cpp).
// ctest-label: slurm
#include <stdlib.h>

#include <string>

#include <gtest/gtest.h>

#include "distributed/rendezvous_network.h"

namespace plugtrain {
namespace rendezvous_network_test {

// GLOO_SOCKET_IFNAME as a test sets it, and as it was again afterwards.
class GlooInterfaceVariable {
 public:
  explicit GlooInterfaceVariable(const char* value) {
    if (const char* old = ::getenv("GLOO_SOCKET_IFNAME")) old_ = old;
    value ? ::setenv("GLOO_SOCKET_IFNAME", value, 1) : ::unsetenv("GLOO_SOCKET_IFNAME");
  }
  ~GlooInterfaceVariable() {
    old_.empty() ? ::unsetenv("GLOO_SOCKET_IFNAME") : ::setenv("GLOO_SOCKET_IFNAME", old_.c_str(), 1);
  }

 private:
  std::string old_;
};

World local_world(const std::string& master_addr) {
  World w;
  w.rank = 1;
  w.world_size = 2;
  w.master_addr = master_addr;
  w.master_port = 29500;
  return w;
}

TEST(RendezvousNetwork, AGivenMasterAddrIsResolvedAndReachedOverItsRoute) {
  GlooInterfaceVariable unset(nullptr);
  const RendezvousNetwork n = find_rendezvous_network(local_world("localhost"), "");
  EXPECT_TRUE(n.address == "127.0.0.1" || n.address == "::1") << n.address;
  EXPECT_EQ(n.address_source, "MASTER_ADDR");
  EXPECT_EQ(n.interface, "lo");
  EXPECT_EQ(n.interface_source, "its route to " + n.address);
}

TEST(RendezvousNetwork, TheKeyWinsOverGlooSocketIfnameWhichWinsOverTheRoute) {
  GlooInterfaceVariable set("lo");
  EXPECT_EQ(find_rendezvous_network(local_world("127.0.0.1"), "").interface_source, "GLOO_SOCKET_IFNAME");
  const RendezvousNetwork n = find_rendezvous_network(local_world("127.0.0.1"), "lo,lo");
  EXPECT_EQ(n.interface, "lo,lo");
  EXPECT_EQ(n.interface_source, "distributed.interface");
  EXPECT_EQ(split_interfaces(n.interface), (std::vector<std::string>{"lo", "lo"}));
}

TEST(RendezvousNetwork, BadNamesAreOneLine) {
  GlooInterfaceVariable set("nope0");
  try {
    find_rendezvous_network(local_world("127.0.0.1"), "");
    FAIL() << "an interface that does not exist was taken";
  } catch (const DistributedError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("rank 1: GLOO_SOCKET_IFNAME = \"nope0\" names no network interface on this "
                                          "host; it has lo",
                                          0),
              0u)
        << e.what();
  }
  try {
    find_rendezvous_network(local_world("no-such-host.invalid"), "");
    FAIL() << "a rendezvous host that does not resolve was taken";
  } catch (const DistributedError& e) {
    EXPECT_EQ(
        std::string(e.what()).rfind(
            "rank 1: the rendezvous host MASTER_ADDR=no-such-host.invalid does not resolve: no-such-host.invalid: ", 0),
        0u)
        << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

}  // namespace rendezvous_network_test
}  // namespace plugtrain
