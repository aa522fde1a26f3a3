// The plugins built against released SDK headers (support/sdk_versions.h) through the real
// `plugtrain` executable: `plugins --json` shows exactly what they say, and a short training
// run uses their backend and their model.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/run_process.h"
#include "support/sdk_versions.h"

namespace plugtrain {
namespace sdk_versions_cli_test {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::OldSdkPlugin;
using testing::shell_quote;

class SdkVersionsCliTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::scratch_dir("sdk-versions"); }
  void TearDown() override { fs::remove_all(dir_); }

  testing::ProcessResult plugtrain(const std::string& args, bool merge_stderr = true) const {
    return testing::run_process("cd " + shell_quote(dir_.string()) + " && exec env -u PLUGTRAIN_PLUGIN_PATH " +
                                    shell_quote(PLUGTRAIN_EXE) + " " + args,
                                merge_stderr);
  }
  static std::string plugin_paths(const std::vector<OldSdkPlugin>& plugins) {
    std::string args;
    for (const auto& p : plugins) args += " --plugin-path " + shell_quote(p.folder().string());
    return args;
  }
  void write_experiment(const OldSdkPlugin& p) const {
    std::ofstream(dir_ / "exp.toml") << "[experiment]\nname = \"sdk" << p.tag << "\"\nseed = 3\n"
                                     << "[backend]\nname = \"" << p.backend() << "\"\n"
                                     << "[model]\nname = \"" << p.model() << "\"\nhidden = 16\nactivation = \"tanh\"\n"
                                     << R"([data]
dataset = "synthetic"
synthetic_shape = [1, 8, 8]
synthetic_classes = 4
synthetic_train_size = 400
synthetic_test_size = 100
batch_size = 50
[optim]
name = "sgd"
lr = 0.1
[train]
epochs = 2
log_interval = 0
)";
  }
  json summary(const OldSdkPlugin& p) const {
    const fs::path run = dir_ / "runs" / ("sdk" + p.tag) / "version_0" / "summary.json";
    std::ifstream in(run);
    return in ? json::parse(in) : json();
  }

  fs::path dir_;
};

const json* entry_named(const json& report, const std::string& name) {
  for (const json& p : report.at("plugins"))
    if (p.value("name", "") == name) return &p;
  return nullptr;
}

TEST_F(SdkVersionsCliTest, PluginsJsonShowsExactlyWhatOldPluginsSay) {
  std::vector<OldSdkPlugin> plugins = testing::old_sdk_backends();
  const testing::ProcessResult r = plugtrain("plugins --json" + plugin_paths(plugins), /*merge_stderr=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json report = json::parse(r.out);

  for (const OldSdkPlugin& p : plugins) {
    SCOPED_TRACE("plugin " + p.backend());
    const json* b = entry_named(report, p.backend());
    ASSERT_NE(b, nullptr) << report.dump(2);
    EXPECT_EQ(b->at("status"), "usable") << b->dump(2);
    EXPECT_EQ(b->at("sdk_abi"), "3." + std::to_string(p.minor));
    const json& c = b->at("capabilities");
    EXPECT_EQ(c.value("device_type", ""), "cpu") << c.dump();
    EXPECT_EQ(c.value("host_cpu", false), true);
    EXPECT_EQ(c.value("float64", true), false);
    EXPECT_EQ(c.value("priority", 0), -int(p.number));
    EXPECT_EQ(c.value("strategies", json()), json({"single", "dp"}));
    EXPECT_EQ(c.value("collective", ""), p.collective());
    const json& probe = b->at("probe");
    EXPECT_EQ(probe.at("code"), "usable");
    EXPECT_EQ(probe.at("message"), "usable: the sdk " + p.tag + " plugin");
    ASSERT_EQ(probe.at("devices").size(), 1u);
    EXPECT_EQ(probe.at("devices")[0], json({{"index", 0},
                                            {"name", p.device_name()},
                                            {"capability", p.capability()},
                                            {"total_memory_bytes", 3000000000 + p.number},
                                            {"free_memory_bytes", 1000000000 + p.number},
                                            {"details", p.details()}}));
  }
  for (const OldSdkPlugin& p : {testing::sdk30(), testing::sdk32()}) {
    const json* m = entry_named(report, p.models());
    ASSERT_NE(m, nullptr) << report.dump(2);
    EXPECT_EQ(m->at("status"), "loaded") << m->dump(2);
    EXPECT_EQ(m->at("sdk_abi"), "3." + std::to_string(p.minor));
    EXPECT_EQ(m->at("models"), json({p.model()}));
  }
}

TEST_F(SdkVersionsCliTest, TrainsOnAnOldBackendWithAnOldModel) {
  for (const OldSdkPlugin& p : {testing::sdk30(), testing::sdk32()}) {
    SCOPED_TRACE("sdk " + p.tag);
    write_experiment(p);
    const testing::ProcessResult r = plugtrain("run exp.toml" + plugin_paths({p}));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("warning: " + p.plan_warning()), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("loader: workers 1, pin_memory off, non_blocking on, prefetch 3"), std::string::npos) << r.out;
    const json s = summary(p);
    ASSERT_EQ(s.value("epochs", json::array()).size(), 2u) << s.dump(2);
    EXPECT_TRUE(s.at("final_test_accuracy").is_number()) << s.dump(2);
    // Each epoch's memory figures are the plugin's memory(), field for field.
    for (const json& epoch : s.at("epochs"))
      EXPECT_EQ(epoch.at("memory"), json({{"total_bytes", 7000000000 + p.number},
                                          {"free_bytes", 5000000000 + p.number},
                                          {"used_bytes", 100000000 + p.number},
                                          {"peak_bytes", 200000000 + p.number},
                                          {"reserved_bytes", 300000000 + p.number},
                                          {"oom_events", p.number},
                                          {"note", p.memory_note()}}));
  }
}

// The 3.2 plugin's OptionRule crossed intact: the host refuses a value it forbids, before any work.
TEST_F(SdkVersionsCliTest, ChecksTheRulesOfA32ModelsPlugin) {
  write_experiment(testing::sdk32());
  const testing::ProcessResult r =
      plugtrain("run exp.toml" + plugin_paths({testing::sdk32()}) + " --set " + shell_quote("model.activation=\"gelu\""));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("model.activation"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "runs" / "sdk32")) << r.out;
}

}  // namespace sdk_versions_cli_test
}  // namespace plugtrain
