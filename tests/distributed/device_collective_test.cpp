// ddp's device collective (NCCL for CUDA) through the real plugins on this machine, which has
// no GPU: the CUDA plugin exports it and its plan names it; asking it for NCCL here fails with
// one line naming the plugin (never a crash); a plugin that plans a collective it does not
// export leaves its tensors to Gloo and says so. NCCL itself runs only where a GPU does.
// ctest-label: unit
#include <gtest/gtest.h>

#include <sstream>

#include "distributed/collectives.h"
#include "distributed/device_collective.h"
#include "distributed/launcher.h"
#include "plugins/plugin_error.h"
#include "plugins/plugin_host.h"

namespace plugtrain {
namespace device_collective_test {

PluginHost built_plugins() {
  SearchOptions options;
  options.cli_paths = {PLUGTRAIN_PLUGIN_DIR};
  options.use_environment = false;
  options.use_default = false;
  return PluginHost(options);
}

BackendHandle* find(PluginHost& host, const std::string& name) {
  for (auto& b : host.backends())
    if (b.name() == name) return &b;
  return nullptr;
}

World one_rank() {
  World w;
  w.master_addr = "127.0.0.1";
  w.master_port = free_local_port();
  w.source = "test";
  return w;
}

TEST(DeviceCollective, TheCudaPluginPlansAndExportsNccl) {
  PluginHost host = built_plugins();
  BackendHandle* cuda = find(host, "cuda");
  if (!cuda) GTEST_SKIP() << "built without the cuda backend";
  EXPECT_NE(cuda->collective_factory(), nullptr);
  EXPECT_EQ(cuda->plan_multi_device({{0}, Strategy::ddp}).collective, "nccl");
  ASSERT_NE(find(host, "cpu"), nullptr);
  EXPECT_EQ(find(host, "cpu")->collective_factory(), nullptr) << "the CPU keeps Gloo";
}

TEST(DeviceCollective, NcclWithoutAGpuFailsWithOneLineNamingThePlugin) {
  PluginHost host = built_plugins();
  BackendHandle* cuda = find(host, "cuda");
  if (!cuda) GTEST_SKIP() << "built without the cuda backend";
  Collectives collectives(one_rank(), std::chrono::milliseconds(5000));
  std::ostringstream log;
  try {
    attach_device_collective(collectives, *cuda, "nccl", c10::Device("cuda:0"), log);
    GTEST_SKIP() << "NCCL connected: this machine has a GPU";
  } catch (const PluginError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("plugin 'cuda': create_collective threw: NCCL", 0), 0) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(DeviceCollective, APlannedCollectiveThePluginDoesNotOfferLeavesTensorsToGloo) {
  PluginHost host = built_plugins();
  BackendHandle* cpu = find(host, "cpu");
  ASSERT_NE(cpu, nullptr);
  Collectives collectives(one_rank(), std::chrono::milliseconds(5000));
  std::ostringstream log;
  // Nothing touches the device: the missing export is noticed first.
  EXPECT_EQ(attach_device_collective(collectives, *cpu, "nccl", c10::Device("cuda:0"), log), "gloo");
  EXPECT_EQ(log.str(),
            "warning: backend 'cpu' plans collective 'nccl' but offers no extension \"plugtrain.collective\"; "
            "Gloo carries its tensors\n");
  EXPECT_EQ(attach_device_collective(collectives, *cpu, "gloo", c10::Device("cpu"), log), "gloo");
}

}  // namespace device_collective_test
}  // namespace plugtrain
