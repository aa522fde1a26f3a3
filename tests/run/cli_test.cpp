// `plugtrain` end to end, in fresh processes, as a user runs it.
// ctest-label: e2e
#include <algorithm>
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/version.h>
#include <nlohmann/json.hpp>

#include "support/run_process.h"

namespace plugtrain {
namespace cli_test {

using ::testing::HasSubstr;
using testing::run_process;
using testing::shell_quote;
using ::testing::StartsWith;
namespace fs = std::filesystem;

const std::string kPlugtrain = PLUGTRAIN_EXE;

// The user's environment must not change what the tests see.
std::string plugtrain(const std::string& args) { return testing::plugtrain_command(args); }

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
  EXPECT_EQ(j["sdk_abi"], "5.0");
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

TEST(Cli, PluginsListsSearchOrderStatusAndDevices) {
  auto r = run_process(plugtrain("plugins --json"), /*merge_stderr=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("search_path").back().at("origin"), "beside executable");
  const nlohmann::json* cpu = plugin_named(j, "cpu");
  ASSERT_NE(cpu, nullptr) << r.out;
  EXPECT_EQ(cpu->at("kind"), "backend");
  EXPECT_EQ(cpu->at("version"), "0.1.0");
  EXPECT_EQ(cpu->at("status"), "usable");
  ASSERT_EQ(cpu->at("probe").at("devices").size(), 1u) << *cpu;
  EXPECT_EQ(cpu->at("probe").at("devices")[0].at("index"), 0);
  EXPECT_EQ(cpu->at("capabilities").at("device_type"), "cpu");
#if !defined(__APPLE__)
  const nlohmann::json* mps = plugin_named(j, "mps");
  ASSERT_NE(mps, nullptr) << r.out;
  EXPECT_EQ(mps->at("status"), "unusable");
  EXPECT_EQ(mps->at("probe").at("code"), "unsupported_platform");
  EXPECT_THAT(mps->at("probe").at("message").get<std::string>(), HasSubstr("MPS needs macOS"));
#endif
  // Without --json, the same as a table that starts with the search order.
  const auto table = run_process(plugtrain("plugins"));
  EXPECT_THAT(table.out, StartsWith("Plugin search order"));
}

TEST(Cli, BadPluginsOnTheEnvironmentPathAreListedAndExitIsStillZero) {
  const std::string tp = PLUGTRAIN_TEST_PLUGIN_DIR;
  auto r = run_process("PLUGTRAIN_PLUGIN_PATH=" + shell_quote(tp + "/bad_abi:" + tp + "/not_a_plugin") + " " +
                           shell_quote(kPlugtrain) + " plugins --json",
                       /*merge_stderr=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("search_path")[0].at("origin"), "PLUGTRAIN_PLUGIN_PATH");
  const nlohmann::json* bad_abi = plugin_named(j, "badabi");
  ASSERT_NE(bad_abi, nullptr) << r.out;
  EXPECT_EQ(bad_abi->at("status"), "refused");
  EXPECT_EQ(bad_abi->at("reason"), "built against SDK 6.0; this host takes SDK " + j.at("sdk_abi").get<std::string>() +
                                       " plugins only: update plugtrain");
  const nlohmann::json* not_a_plugin = plugin_named(j, "test_not_a_plugin.so");
  ASSERT_NE(not_a_plugin, nullptr) << r.out;
  EXPECT_EQ(not_a_plugin->at("status"), "refused");
  EXPECT_THAT(not_a_plugin->at("reason").get<std::string>(), StartsWith("not a plugtrain plugin"));
  ASSERT_NE(plugin_named(j, "cpu"), nullptr) << r.out;
  EXPECT_EQ(plugin_named(j, "cpu")->at("status"), "usable");
}

TEST(Cli, VersionNamesPlugtrainLibTorchAndSdkAbi) {
  auto r = run_process(plugtrain("--version"));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("plugtrain 0.1.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("LibTorch " TORCH_VERSION), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("SDK ABI 5.0"), std::string::npos) << r.out;
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

// `plugtrain models NAME`: the layer table and totals of one architecture.
const std::string kResnet18Cifar = "models resnet18 --input 3x32x32 --classes 10 --set 'stem=\"cifar\"'";

// The line of `text` that starts with `prefix` ("" when none does).
std::string line_starting(const std::string& text, const std::string& prefix) {
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    if (text.compare(at, prefix.size(), prefix) == 0) return text.substr(at, end - at);
    at = end + 1;
  }
  return "";
}

TEST(Cli, ModelsNamePrintsLayerRowsInForwardOrderAndTotals) {
  auto r = run_process(plugtrain(kResnet18Cifar), /*merge_stderr=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(line_starting(r.out, "Total parameters:").find("11,173,962"), std::string::npos) << r.out;
  EXPECT_NE(line_starting(r.out, "Trainable parameters:").find("11,173,962"), std::string::npos) << r.out;
  EXPECT_NE(line_starting(r.out, "Multiply-adds per sample:").find("0.56 G"), std::string::npos) << r.out;
  const std::string row = line_starting(r.out, "layer1.0.conv1 ");
  EXPECT_NE(row.find(" Conv2d "), std::string::npos) << r.out;
  EXPECT_NE(row.find(" 64x32x32 "), std::string::npos) << r.out;
  EXPECT_NE(row.find(" 36,864 "), std::string::npos) << row;  // 64 x 64 x 3 x 3
  // Forward order: the stem, then the blocks, the classifier last.
  EXPECT_LT(r.out.find("\nconv1 "), r.out.find("\nlayer1.0.conv1 ")) << r.out;
  EXPECT_LT(r.out.find("\nlayer4.1.bn2 "), r.out.find("\nfc ")) << r.out;
  // The ImageNet form at 224 px: torchvision's quoted 1.8 G multiply-adds.
  auto big = run_process(plugtrain("models resnet18 --input 3x224x224 --classes 1000"), false);
  ASSERT_EQ(big.exit_code, 0) << big.out;
  EXPECT_NE(line_starting(big.out, "Total parameters:").find("11,689,512"), std::string::npos) << big.out;
  EXPECT_NE(line_starting(big.out, "Multiply-adds per sample:").find("1.81 G"), std::string::npos) << big.out;
}

TEST(Cli, ModelsJsonHasTheRowsAndTheSameTotalsAsTheText) {
  auto text = run_process(plugtrain(kResnet18Cifar), false);
  auto r = run_process(plugtrain(kResnet18Cifar + " --json"), false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const auto& totals = j["totals"];
  EXPECT_EQ(totals["parameters"], 11173962);
  EXPECT_EQ(totals["trainable_parameters"], 11173962);
  EXPECT_EQ(totals["macs"], 555422720);
  // The text's totals are the same numbers.
  auto grouped = [](std::int64_t v) {
    std::string s = std::to_string(v);
    for (int i = int(s.size()) - 3; i > 0; i -= 3) s.insert(std::size_t(i), ",");
    return s;
  };
  ASSERT_EQ(text.exit_code, 0) << text.out;
  EXPECT_NE(line_starting(text.out, "Total parameters:").find(grouped(totals["parameters"])), std::string::npos)
      << text.out;
  EXPECT_NE(line_starting(text.out, "Multiply-adds per sample:").find("(" + grouped(totals["macs"]) + ")"),
            std::string::npos)
      << text.out;
  std::int64_t parameters = 0, macs = 0;
  for (const auto& row : j["rows"]) {
    parameters += row["parameters"].get<std::int64_t>();
    macs += row["macs"].get<std::int64_t>();
  }
  EXPECT_EQ(parameters, totals["parameters"].get<std::int64_t>());
  EXPECT_EQ(macs, totals["macs"].get<std::int64_t>());
  ASSERT_GT(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][2]["name"], "layer1.0.conv1");
  EXPECT_EQ(j["rows"][2]["type"], "Conv2d");
  EXPECT_EQ(j["rows"][2]["output_shape"], nlohmann::json({64, 32, 32}));
  EXPECT_EQ(j["options"]["stem"], "cifar");
}

TEST(Cli, ModelsMlpMultiplyAddsAreItsWeightsOnePerInputFeatureOfEachOutput) {
  // 784 -> 256 -> 128 -> 10: a Linear does in x out multiply-adds per sample, one per weight,
  // none for its biases: 235,146 parameters - (256 + 128 + 10) biases.
  auto r = run_process(plugtrain("models mlp --input 1x28x28 --json"), false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["totals"]["parameters"], 235146);
  EXPECT_EQ(j["totals"]["macs"], 235146 - (256 + 128 + 10));
  ASSERT_EQ(j["rows"].size(), 3u);
  for (const auto& row : j["rows"]) {
    EXPECT_EQ(row["type"], "Linear");
    const std::int64_t out = row["output_shape"][0].get<std::int64_t>();
    EXPECT_EQ(row["macs"].get<std::int64_t>(), row["parameters"].get<std::int64_t>() - out) << row;
  }
}

TEST(Cli, ModelsNameErrorsAreOneLineAndExitTwo) {
  auto unknown = run_process(plugtrain("models resnet19 --input 3x32x32"));
  EXPECT_EQ(unknown.exit_code, 2) << unknown.out;
  EXPECT_EQ(std::count(unknown.out.begin(), unknown.out.end(), '\n'), 1) << unknown.out;
  EXPECT_NE(unknown.out.find("unknown model 'resnet19' (did you mean 'resnet18'?); available: exported, mlp"),
            std::string::npos)
      << unknown.out;

  auto option = run_process(plugtrain("models resnet18 --input 3x32x32 --set stme=cifar"));
  EXPECT_EQ(option.exit_code, 2) << option.out;
  EXPECT_EQ(std::count(option.out.begin(), option.out.end(), '\n'), 1) << option.out;
  EXPECT_NE(option.out.find("--set model.stme: model 'resnet18' has no option 'stme' (did you mean 'stem'?)"),
            std::string::npos)
      << option.out;

  auto value = run_process(plugtrain("models resnet18 --input 3x32x32 --set stem=1"));
  EXPECT_EQ(value.exit_code, 2) << value.out;
  EXPECT_NE(value.out.find("--set model.stem: model.stem must be a string, got integer"), std::string::npos)
      << value.out;

  auto input = run_process(plugtrain("models resnet18 --input 3x32"));
  EXPECT_EQ(input.exit_code, 2) << input.out;
  EXPECT_EQ(std::count(input.out.begin(), input.out.end(), '\n'), 1) << input.out;
  EXPECT_NE(input.out.find("--input 3x32: expected CxHxW"), std::string::npos) << input.out;

  // Without NAME: the list of every model, as before.
  auto list = run_process(plugtrain("models"));
  EXPECT_EQ(list.exit_code, 0) << list.out;
  EXPECT_NE(list.out.find("resnet18  (models)"), std::string::npos) << list.out;
}

}  // namespace cli_test
}  // namespace plugtrain
