// The SDK's version rule (docs/plugins.md, "How the SDK changes"; tests/sdk_headers/README.md),
// as a plugin author meets it: the host takes plugins of exactly its own SDK version, so a plugin
// built against the released 3.3 or 4.0 headers, one of a newer minor and one of a newer major are
// each refused in one line that says what to do, while the bundled plugins beside them load; and a
// handshake that names other kinds than the registration gives is refused with the reason.
#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "plugins/plugin_host.h"
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
  const std::string only = "this host takes SDK " + std::to_string(PLUGTRAIN_SDK_ABI_MAJOR) + "." +
                           std::to_string(PLUGTRAIN_SDK_ABI_MINOR) + " plugins only";
  const std::string port = ": move it to SDK 5 and rebuild it (docs/migrating-to-sdk5.md)";
  const struct {
    const char *folder, *name;
    std::string reason;
  } cases[] = {
      {"sdk33", "sdk33", "built against SDK 3.3; " + only + port},
      {"sdk40", "sdk40vendor", "built against SDK 4.0; " + only + port},
      {"bad_abi", "badabi", "built against SDK 6.0; " + only + ": update plugtrain"},
      {"newer_minor", "newerminor",
       "built against SDK 5.99; " + only + ": rebuild it against this host's SDK (the same source builds)"},
  };
  for (const auto& c : cases) {
    PluginHost host = host_with(c.folder);
    const PluginRecord& r = record_named(host, c.name);
    EXPECT_EQ(r.status, PluginStatus::refused) << c.name;
    EXPECT_EQ(r.reason, c.reason);
    EXPECT_EQ(host.backend(c.name), nullptr);
    EXPECT_EQ(host.models().find("sdk40vendor_linear"), nullptr) << "a refused plugin registers nothing";
    expect_cpu_backend_usable(host);
  }
}

// The same through the executable a user runs: `plugtrain plugins --json` lists the SDK 4 plugin
// as refused, with the guide to move it in its reason.
TEST(SdkRules, TheExecutableListsAnSdk4PluginAsRefusedWithTheWayToMoveIt) {
  const std::string path = " --plugin-path " + testing::shell_quote((kTestPlugins / "sdk40").string());
  const testing::ProcessResult listed =
      testing::run_process(testing::shell_quote(PLUGTRAIN_EXE) + " plugins --json" + path, /*merge_stderr=*/false);
  ASSERT_EQ(listed.exit_code, 0) << listed.out;
  const nlohmann::json j = nlohmann::json::parse(listed.out);
  bool seen = false;
  for (const nlohmann::json& p : j["plugins"])
    if (p["name"] == "sdk40vendor") {
      seen = true;
      EXPECT_EQ(p["status"], "refused");
      EXPECT_NE(p["reason"].get<std::string>().find("docs/migrating-to-sdk5.md"), std::string::npos) << p.dump();
    }
  EXPECT_TRUE(seen) << listed.out;
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
