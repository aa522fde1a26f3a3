// `plugtrain` end to end, in fresh processes, as a user runs it.
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/version.h>

#include "support/run_process.h"

namespace plugtrain {
namespace {

using testing::run_process;
using testing::shell_quote;
namespace fs = std::filesystem;

const std::string kPlugtrain = PLUGTRAIN_EXE;

// The user's environment must not change what the tests see.
std::string plugtrain(const std::string& args) {
  return "env -u PLUGTRAIN_PLUGIN_PATH " + shell_quote(kPlugtrain) + " " + args;
}

const nlohmann::json* plugin_named(const nlohmann::json& j, const std::string& name) {
  for (const auto& p : j["plugins"])
    if (p["name"] == name) return &p;
  return nullptr;
}

bool machine_has_nvidia_driver() { return fs::exists("/dev/nvidiactl"); }

TEST(Cli, PluginsJsonReportsCpuUsableAndGpuBackendsWithReasons) {
  auto r = run_process(plugtrain("plugins --json"), /*merge_stderr=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["libtorch"], TORCH_VERSION);
  EXPECT_EQ(j["sdk_abi"], "3.2");
  ASSERT_FALSE(j["search_path"].empty());
  EXPECT_EQ(j["search_path"].back()["origin"], "beside executable");

  const nlohmann::json* cpu = plugin_named(j, "cpu");
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ((*cpu)["status"], "usable");
  EXPECT_EQ((*cpu)["kind"], "backend");
  ASSERT_EQ((*cpu)["probe"]["devices"].size(), 1u);
  const auto& dev = (*cpu)["probe"]["devices"][0];
  EXPECT_GT(dev["total_memory_bytes"].get<std::uint64_t>(), 0u);
  EXPECT_GE(std::stoi(dev["details"]["cores"].get<std::string>()), 1);
  EXPECT_GE(std::stoi(dev["details"]["intra-op threads"].get<std::string>()), 1);
  // What the host knows of a backend comes from its capabilities, never from its name.
  EXPECT_EQ((*cpu)["capabilities"]["device_type"], "cpu");
  EXPECT_EQ((*cpu)["capabilities"]["host_cpu"], true);
  EXPECT_EQ((*cpu)["capabilities"]["strategies"], nlohmann::json({"single", "dp", "ddp"}));
  if (const nlohmann::json* cuda = plugin_named(j, "cuda")) {
    EXPECT_EQ((*cuda)["capabilities"]["host_cpu"], false);
    EXPECT_GT((*cuda)["capabilities"]["priority"].get<int>(), (*cpu)["capabilities"]["priority"].get<int>());
  }

  if (const nlohmann::json* cuda = plugin_named(j, "cuda")) {
    if (!machine_has_nvidia_driver()) {
      EXPECT_EQ((*cuda)["status"], "unusable");
      EXPECT_EQ((*cuda)["probe"]["code"], "no_driver");
      EXPECT_NE((*cuda)["reason"].get<std::string>().find("libcuda.so.1"), std::string::npos);
    } else if ((*cuda)["status"] == "usable") {
      EXPECT_FALSE((*cuda)["probe"]["devices"].empty());
    } else {
      EXPECT_FALSE((*cuda)["reason"].get<std::string>().empty());
    }
  }
#if !defined(__APPLE__)
  if (const nlohmann::json* mps = plugin_named(j, "mps")) {
    EXPECT_EQ((*mps)["status"], "unusable");
    EXPECT_EQ((*mps)["probe"]["code"], "unsupported_platform");
    EXPECT_NE((*mps)["reason"].get<std::string>().find("MPS needs macOS"), std::string::npos);
  }
#endif
}

TEST(Cli, PluginsTableShowsSearchOrderStatusAndDevices) {
  auto r = run_process(plugtrain("plugins"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("Plugin search order"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(beside executable)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cpu         backend  0.1.0    usable"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cpu:0"), std::string::npos) << r.out;
#if !defined(__APPLE__)
  EXPECT_NE(r.out.find("unusable: unsupported_platform: MPS needs macOS"), std::string::npos) << r.out;
#endif
}

TEST(Cli, BadPluginsOnTheEnvironmentPathAreListedAndExitIsStillZero) {
  const std::string tp = PLUGTRAIN_TEST_PLUGIN_DIR;
  auto r = run_process("PLUGTRAIN_PLUGIN_PATH=" + shell_quote(tp + "/bad_abi:" + tp + "/not_a_plugin") + " " +
                       shell_quote(kPlugtrain) + " plugins");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("(PLUGTRAIN_PLUGIN_PATH)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("refused: SDK ABI major differs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("refused: not a plugtrain plugin"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("usable"), std::string::npos) << r.out;
}

TEST(Cli, VersionNamesPlugtrainLibTorchAndSdkAbi) {
  auto r = run_process(plugtrain("--version"));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("plugtrain 0.1.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("LibTorch " TORCH_VERSION), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("SDK ABI 3.2"), std::string::npos) << r.out;
}

TEST(Cli, HelpListsCommandsAndEachCommandHasHelp) {
  auto r = run_process(plugtrain("--help"));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("plugins"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("models"), std::string::npos) << r.out;
  auto p = run_process(plugtrain("plugins --help"));
  EXPECT_EQ(p.exit_code, 0);
  EXPECT_NE(p.out.find("--json"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("--plugin-path"), std::string::npos) << p.out;
}

TEST(Cli, UnknownCommandIsAOneLineErrorAndNonZeroExit) {
  auto r = run_process(plugtrain("fly"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("fly"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace plugtrain
