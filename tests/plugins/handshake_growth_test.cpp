// The handshake grows as abi.h says: the host checks struct_size against the end of the last
// field it needs (`name`), not against its own sizeof. A plugin whose handshake ends at `name`
// (built before `version` and `description` were appended) loads and works, and the host reads
// nothing past its end (the test plugin puts an unreadable page there); one with fields appended
// after today's loads too; one that ends before `name` is refused in one line.
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "plugins/plugin_host.h"
#include "support/run_process.h"

namespace plugtrain {
namespace handshake_growth_test {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
const fs::path kTestPlugins = PLUGTRAIN_TEST_PLUGIN_DIR;

PluginHost host_with(const std::string& folder) {
  SearchOptions options;
  options.cli_paths = {kTestPlugins / folder};
  options.use_environment = false;
  return PluginHost(options);
}

const PluginRecord* record_named(const PluginHost& host, const std::string& name) {
  for (const auto& r : host.plugins())
    if (r.display_name() == name) return &r;
  return nullptr;
}

TEST(HandshakeGrowth, AHandshakeEndingAtTheLastFieldTheHostNeedsLoadsWithoutItsLaterFields) {
  PluginHost host = host_with("handshake_shorter");
  const PluginRecord* r = record_named(host, "shorterhandshake");
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->status, PluginStatus::loaded) << r->reason;
  EXPECT_EQ(r->handshake.version, "") << "a field past struct_size is absent";
  EXPECT_EQ(r->handshake.description, "");
  BackendHandle* backend = host.backend("shorterhandshake");
  ASSERT_NE(backend, nullptr);
  EXPECT_TRUE(backend->probe().usable()) << backend->probe().message;
}

TEST(HandshakeGrowth, AHandshakeWithFieldsAppendedAfterTodaysLoads) {
  PluginHost host = host_with("handshake_longer");
  const PluginRecord* r = record_named(host, "longerhandshake");
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->status, PluginStatus::loaded) << r->reason;
  EXPECT_EQ(r->handshake.version, "0.0.1");
  EXPECT_EQ(r->handshake.description, "a handshake with two fields after today's");
  ASSERT_NE(host.backend("longerhandshake"), nullptr);
  EXPECT_TRUE(host.backend("longerhandshake")->probe().usable());
}

TEST(HandshakeGrowth, AHandshakeEndingBeforeTheFieldsTheHostNeedsIsRefusedInOneLineNamingThePlugin) {
  const std::string file = "test_handshake_too_short.so";
  PluginHost host = host_with("handshake_too_short");
  const PluginRecord* r = record_named(host, file);
  ASSERT_NE(r, nullptr) << "named by its file, since its handshake has no name";
  EXPECT_EQ(r->status, PluginStatus::refused);
  EXPECT_EQ(r->reason, "its handshake is " + std::to_string(PLUGTRAIN_INFO_FIELD_END(cxx_abi)) +
                           " bytes, shorter than the " + std::to_string(PLUGTRAIN_INFO_FIELD_END(name)) +
                           " this host reads: rebuild it with PLUGTRAIN_PLUGIN");

  // The listing says the same in one entry, and the bundled plugins load beside it.
  const auto listed = testing::run_process(
      testing::plugtrain_command("plugins --json --plugin-path " + (kTestPlugins / "handshake_too_short").string()),
      false);
  ASSERT_EQ(listed.exit_code, 0) << listed.out;
  const nlohmann::json j = nlohmann::json::parse(listed.out);
  bool found = false;
  for (const auto& p : j.at("plugins")) {
    if (p.at("name") != file) continue;
    found = true;
    EXPECT_EQ(p.at("status"), "refused");
    EXPECT_EQ(p.at("reason"), r->reason);
    EXPECT_THAT(p.at("reason").get<std::string>(), Not(HasSubstr("\n")));
  }
  EXPECT_TRUE(found) << listed.out;
}

}  // namespace handshake_growth_test
}  // namespace plugtrain
