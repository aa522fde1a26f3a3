// The SDK's growth rule (docs/plugins.md, "How the SDK grows"; tests/sdk_headers/README.md), as
// a plugin author meets it: a plugin built against the released 4.0 headers registers all four
// kinds in today's host and trains through the real executable, doing without a host extension
// this host lacks; a host built against the test-only 4.3 headers loads that 4.0 plugin unchanged
// and the 4.3 build of it, which calls 4.3's appended call and offers 4.3's extension; today's
// host refuses the 4.3 plugin, a 3.x plugin and a 5.0 one, each in one line that says what to do;
// and a handshake that names other kinds than the registration gives is refused with the reason.
#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "plugins/plugin_host.h"
#include "support/experiment_folder.h"
#include "support/run_process.h"

namespace plugtrain {
namespace sdk_rules_test {

namespace fs = std::filesystem;
const fs::path kTestPlugins = PLUGTRAIN_TEST_PLUGIN_DIR;

PluginHost host_with(const std::string& folder) {
  SearchOptions options;
  options.cli_paths = {kTestPlugins / folder};
  options.use_environment = false;
  return PluginHost(options);
}

const PluginRecord& record_named(const PluginHost& host, const std::string& name) {
  for (const auto& r : host.plugins())
    if (r.display_name() == name) return r;
  throw std::runtime_error("no plugin named " + name);
}

// The bundled plugins load beside whatever was refused: one bad plugin costs only itself.
void expect_cpu_backend_usable(PluginHost& host) {
  BackendHandle* cpu = host.backend("cpu");
  ASSERT_NE(cpu, nullptr);
  EXPECT_TRUE(cpu->probe().usable());
}

TEST(SdkRules, APluginOfAnotherSdkIsRefusedInOneLineThatSaysWhatToDo) {
  const std::string host_sdk = std::to_string(PLUGTRAIN_SDK_ABI_MAJOR) + "." + std::to_string(PLUGTRAIN_SDK_ABI_MINOR);
  const struct {
    const char *folder, *name;
    std::string reason;
  } cases[] = {
      {"sdk33", "sdk33",
       "built against SDK 3.3; this host speaks SDK 4: rebuild it (docs/plugins.md, \"Moving from SDK 3\")"},
      {"bad_abi", "badabi", "built against SDK 5.0; this host speaks SDK " + host_sdk + ": update plugtrain"},
      {"sdk43", "sdk43vendor",
       "built against SDK 4.3; this host speaks SDK " + host_sdk + ", which lacks its newer calls: update plugtrain"},
  };
  for (const auto& c : cases) {
    PluginHost host = host_with(c.folder);
    const PluginRecord& r = record_named(host, c.name);
    EXPECT_EQ(r.status, PluginStatus::refused) << c.name;
    EXPECT_EQ(r.reason, c.reason);
    EXPECT_EQ(host.backend(c.name), nullptr);
    expect_cpu_backend_usable(host);
  }
}

TEST(SdkRules, AReleased40PluginRegistersEveryKindItNamesAndDoesWithoutAMissingHostExtension) {
  PluginHost host = host_with("sdk40");
  const PluginRecord& r = record_named(host, "sdk40vendor");
  ASSERT_EQ(r.status, PluginStatus::loaded) << r.reason;
  EXPECT_EQ(r.handshake.kind, "backend,models,datasets,tasks");
  EXPECT_EQ(r.handshake.abi_major, 4u);
  EXPECT_EQ(r.handshake.abi_minor, 0u);
  BackendHandle* backend = host.backend("sdk40vendor");
  ASSERT_NE(backend, nullptr);
  EXPECT_TRUE(backend->probe().usable()) << backend->probe().message;
  EXPECT_EQ(backend->probe().devices.at(0).name, "host processor");
  EXPECT_EQ(backend->capabilities().device_type, "cpu");
  EXPECT_EQ(backend->memory(0).note, "not measured by this test plugin");
  ASSERT_NE(host.models().find("sdk40vendor_linear"), nullptr);
  EXPECT_EQ(host.models().find("sdk40vendor_linear")->spec.serves,
            std::vector<DatasetTargets>{DatasetTargets::class_index});
  const RegisteredDataset* data = host.datasets().find("sdk40vendor_blobs");
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->spec.description, "two blobs; the host's greeting: absent");
  ASSERT_EQ(data->rules.size(), 2u) << "each rule's bounds reach the host as calls";
  EXPECT_EQ(data->rules[1].option, "dim");
  EXPECT_EQ(data->rules[1].max, 1024.0);
  const RegisteredTask* task = host.tasks().find("sdk40vendor_task");
  ASSERT_NE(task, nullptr);
  EXPECT_EQ(task->spec.evaluation_metrics.at(0).name, "accuracy");
}

class SdkRunTest : public testing::ExperimentFolderTest {
 protected:
  SdkRunTest()
      : ExperimentFolderTest(
            "sdk_rules",
            "[experiment]\nname = \"vendor\"\nseed = 3\n[backend]\nname = \"sdk40vendor\"\n[model]\nname = "
            "\"sdk40vendor_linear\"\n[task]\nname = \"sdk40vendor_task\"\n[data]\ndataset = \"sdk40vendor_blobs\"\n"
            "batch_size = 32\nnormalize = \"none\"\n[dataset]\nsamples = 512\n[optim]\nname = \"adam\"\nlr = 0.05\n"
            "[train]\nepochs = 3\nlog_interval = 0\n") {}
};

// Two blobs 2 apart in each of 8 dimensions with spread 0.5: a linear model separates all but a
// vanishing share (the Bayes error is below 1e-9), so accuracy above 0.95 after 3 epochs.
TEST_F(SdkRunTest, AReleased40PluginTrainsOnItsOwnBackendThroughTheExecutable) {
  const testing::ProcessResult r = plugtrain("run exp.toml --plugin-path " + (kTestPlugins / "sdk40").string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("sdk40vendor"), std::string::npos) << r.out;
  const nlohmann::json s =
      nlohmann::json::parse(testing::slurp(dir_ / "runs" / "vendor" / "version_0" / "summary.json"));
  EXPECT_EQ(s["task"], "sdk40vendor_task");
  EXPECT_GT(s["final_test_accuracy"].get<double>(), 0.95);
}

std::vector<nlohmann::json> sdk43_host_lines(const std::vector<std::string>& folders) {
  std::string command = testing::shell_quote(PLUGTRAIN_SDK43_HOST);
  for (const std::string& f : folders)
    for (const auto& file : fs::directory_iterator(kTestPlugins / f))
      command += " " + testing::shell_quote(file.path().string());
  const testing::ProcessResult r = testing::run_process(command, /*merge_stderr=*/false);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  std::vector<nlohmann::json> lines;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

TEST(SdkRules, A41HostLoadsThe40PluginUnchangedAndThe41PluginUsesItsNewCallAndExtension) {
  const std::vector<nlohmann::json> lines = sdk43_host_lines({"sdk40", "sdk43"});
  ASSERT_EQ(lines.size(), 2u);
  for (const nlohmann::json& j : lines) {
    ASSERT_FALSE(j.contains("error")) << j.dump();
    ASSERT_FALSE(j.contains("refused")) << j.dump();
    EXPECT_TRUE(j["backend_probe_runs"].get<bool>());
    EXPECT_GT(j["loss"].get<double>(), 0.0) << "cross-entropy of an untrained linear model";
    EXPECT_NE(j["descriptions"].dump().find("the host's greeting: hello from the 4.3 host"), std::string::npos)
        << j.dump();
  }
  const nlohmann::json& v40 = lines[0]["sdk"] == "4.0" ? lines[0] : lines[1];
  const nlohmann::json& v42 = lines[0]["sdk"] == "4.0" ? lines[1] : lines[0];
  EXPECT_EQ(v40["name"], "sdk40vendor");
  EXPECT_EQ(v40["homepage"], "") << "a 4.0 plugin never makes 4.3's call";
  EXPECT_TRUE(v40["summary"].is_null()) << "nor offers 4.3's extension: the host takes the default";
  EXPECT_EQ(v42["name"], "sdk43vendor");
  EXPECT_EQ(v42["sdk"], "4.3");
  EXPECT_EQ(v42["homepage"], "https://example.com/sdk43vendor");
  EXPECT_EQ(v42["summary"], "one linear layer, 16 weights") << "8 inputs to 2 classes";
}

TEST(SdkRules, AHandshakeThatNamesOtherKindsThanTheRegistrationGivesIsRefusedWithTheReason) {
  PluginHost host = host_with("kinds_mismatch");
  EXPECT_EQ(record_named(host, "kindsextra").reason,
            "plugin 'kindsextra': its registration gives a data set, but its handshake names only models");
  EXPECT_EQ(record_named(host, "kindsmissing").reason,
            "plugin 'kindsmissing': its handshake names datasets, but its registration gives none");
  EXPECT_EQ(record_named(host, "kindsnothing").reason,
            "plugin 'kindsnothing': its registration gives nothing (the handshake names models)");
  EXPECT_EQ(host.models().find("kindsextra_model"), nullptr) << "a refused plugin contributes nothing";
  EXPECT_EQ(host.datasets().find("kindsextra_data"), nullptr);
  expect_cpu_backend_usable(host);
}

}  // namespace sdk_rules_test
}  // namespace plugtrain
