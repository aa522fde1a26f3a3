// A plugin that a user other than root and you could change is refused in one line naming the
// path, its mode and owner, and the fix; --allow-insecure-plugins loads it with a warning; doctor
// lists every search-path entry with its owner, group and mode. Copies of a real test plugin in
// folders of the test's own, whose modes, groups and owners the tests set.
// ctest-label: unit
// ctest-label InsecurePluginsCli: e2e
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "plugins/plugin_host.h"
#include "plugins/plugin_permissions.h"
#include "support/experiment_toml.h"
#include "support/run_process.h"

namespace plugtrain {
namespace plugin_permissions_test {

namespace fs = std::filesystem;
using testing::run_process;
using testing::shell_quote;

const fs::path kGoodPlugin = fs::path(PLUGTRAIN_TEST_PLUGIN_DIR) / "good" / "test_good.so";

// A group that others may belong to: not this user's private group. Root gives a folder any group;
// another user only one of its own groups. nullopt: this user has none but its private group.
std::optional<gid_t> shared_group() {
  const TrustedIds me = this_user();
  if (::geteuid() == 0) return gid_t{4242};
  std::vector<gid_t> groups(::getgroups(0, nullptr) + 1);
  groups.resize(std::max(0, ::getgroups(static_cast<int>(groups.size()), groups.data())));
  groups.push_back(::getegid());
  for (gid_t g : groups)
    if (!me.private_group || g != *me.private_group) return g;
  return std::nullopt;
}

class PluginHostInsecure : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::scratch_dir("insecure");
    ::chmod(dir_.c_str(), 0755);
    plugin_ = dir_ / "test_good.so";
    fs::copy_file(kGoodPlugin, plugin_);
    ::chmod(plugin_.c_str(), 0755);
  }
  void TearDown() override { fs::remove_all(dir_); }

  PluginHost host(std::vector<fs::path> paths, bool allow_insecure = false) const {
    SearchOptions options;
    options.cli_paths = std::move(paths);
    options.use_environment = false;
    options.allow_insecure = allow_insecure;
    return PluginHost(options);
  }
  const PluginRecord& record(const PluginHost& h) const {
    for (const auto& r : h.plugins())
      if (r.path.filename() == "test_good.so") return r;
    throw std::runtime_error("no record of test_good.so");
  }
  // Refused in one line naming the path and the fix, and nothing of it registered.
  void expect_refused(PluginHost& h, const std::string& says, const std::string& fix) const {
    const PluginRecord& r = record(h);
    EXPECT_EQ(r.status, PluginStatus::refused);
    EXPECT_NE(r.reason.find(says), std::string::npos) << r.reason;
    EXPECT_NE(r.reason.find(fix), std::string::npos) << r.reason;
    EXPECT_EQ(r.reason.find('\n'), std::string::npos) << r.reason;
    EXPECT_EQ(h.backend("testgood"), nullptr);
    ASSERT_NE(h.backend("cpu"), nullptr) << "the bundled plugins load on";
  }

  fs::path dir_, plugin_;
};

TEST_F(PluginHostInsecure, AGroupWritableFolderIsRefusedNamingItsModeAndTheFix) {
  const std::optional<gid_t> group = shared_group();
  if (!group) GTEST_SKIP() << "this user belongs to no group but its private one";
  ASSERT_EQ(::chown(dir_.c_str(), static_cast<uid_t>(-1), *group), 0);
  ::chmod(dir_.c_str(), 0775);
  PluginHost h = host({dir_});
  expect_refused(h, "folder " + dir_.string() + " is group-writable (drwxrwxr-x ", "chmod g-w " + dir_.string());
  EXPECT_NE(record(h).reason.find("--allow-insecure-plugins"), std::string::npos) << record(h).reason;
}

TEST_F(PluginHostInsecure, AWorldWritableFileIsRefused) {
  ::chmod(plugin_.c_str(), 0757);
  PluginHost h = host({dir_});
  expect_refused(h, "file " + plugin_.string() + " is world-writable (-rwxr-xrwx ", "chmod o-w " + plugin_.string());
}

TEST_F(PluginHostInsecure, AWorldWritableFolderIsRefused) {
  ::chmod(dir_.c_str(), 0777);
  PluginHost h = host({dir_});
  expect_refused(h, "folder " + dir_.string() + " is world-writable (drwxrwxrwx ", "o-w " + dir_.string());
}

TEST_F(PluginHostInsecure, AFileOwnedByAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "only root can give a file to another user";
  ASSERT_EQ(::chown(plugin_.c_str(), 4243, static_cast<gid_t>(-1)), 0);
  PluginHost h = host({dir_});
  expect_refused(h, "file " + plugin_.string() + " is owned by 4243", "chown root " + plugin_.string());
}

TEST_F(PluginHostInsecure, AllowInsecureLoadsItWithTheProblemAsAWarning) {
  ::chmod(plugin_.c_str(), 0757);
  PluginHost h = host({dir_}, true);
  const PluginRecord& r = record(h);
  EXPECT_EQ(r.status, PluginStatus::loaded) << r.reason;
  EXPECT_NE(r.warning.find("is world-writable"), std::string::npos) << r.warning;
  ASSERT_NE(h.backend("testgood"), nullptr);
  EXPECT_TRUE(h.backend("testgood")->probe().usable());
}

TEST_F(PluginHostInsecure, AStickyFolderHoldsANamedPluginButIsNotSearched) {
  ::chmod(dir_.c_str(), 01777);  // as /tmp: others cannot replace the file, but can add new ones
  PluginHost named = host({plugin_});
  EXPECT_EQ(record(named).status, PluginStatus::loaded) << record(named).reason;
  PluginHost searched = host({dir_});
  expect_refused(searched, "folder " + dir_.string() + " is world-writable (drwxrwxrwt ", "sticky bit");
}

TEST_F(PluginHostInsecure, ALinkToAPluginInAWritableFolderIsRefusedNamingThatFolder) {
  const fs::path elsewhere = dir_ / "elsewhere";
  fs::create_directory(elsewhere);
  fs::rename(plugin_, elsewhere / "test_good.so");
  fs::create_symlink(elsewhere / "test_good.so", plugin_);
  ::chmod(elsewhere.c_str(), 0777);
  PluginHost h = host({dir_});
  expect_refused(h, "folder " + elsewhere.string() + " is world-writable", "chmod o-w " + elsewhere.string());
}

TEST_F(PluginHostInsecure, SafePermissionsLoad) {
  PluginHost h = host({dir_});
  EXPECT_EQ(record(h).status, PluginStatus::loaded) << record(h).reason;
  EXPECT_TRUE(record(h).warning.empty());
}

// Debian's user private groups (umask 002): a folder writable by a group that is only yours is yours.
TEST(PluginPermissions, AGroupWritableFolderOfYourOwnPrivateGroupIsYours) {
  const fs::path dir = testing::scratch_dir("private-group");
  ::chmod(dir.c_str(), 0775);
  const fs::path file = dir / "p.so";
  fs::copy_file(kGoodPlugin, file);
  ::chmod(file.c_str(), 0755);
  struct stat st {};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_TRUE(plugin_permissions(file, false, {::geteuid(), st.st_gid}).ok());
  const Status shared = plugin_permissions(file, false, {::geteuid(), std::nullopt});
  ASSERT_FALSE(shared.ok());
  EXPECT_NE(shared.why_not().find("is group-writable"), std::string::npos) << shared.why_not();
  fs::remove_all(dir);
}

TEST(PluginPermissions, ASearchEntryShowsItsOwnerGroupAndMode) {
  const fs::path dir = testing::scratch_dir("entry");
  ::chmod(dir.c_str(), 0750);
  const PathOwnership o = search_entry_ownership(dir, this_user());
  EXPECT_TRUE(o.exists);
  EXPECT_EQ(o.mode, "drwxr-x---");
  EXPECT_FALSE(o.owner.empty());
  EXPECT_FALSE(o.group.empty());
  EXPECT_EQ(o.problem, "");
  EXPECT_FALSE(search_entry_ownership(dir / "missing", this_user()).exists);
  fs::remove_all(dir);
}

// As a user runs it: `plugins --json` keeps the reason; the flag loads with a warning on stderr;
// doctor lists the search path with owners and modes and flags the insecure folder.
class InsecurePluginsCli : public PluginHostInsecure {
 protected:
  std::string plugtrain(const std::string& args) const {
    return testing::plugtrain_command(args + " --plugin-path " + shell_quote(dir_.string()));
  }
  const nlohmann::json* plugin_in(const nlohmann::json& listing) const {
    for (const auto& p : listing.at("plugins"))
      if (p.at("file") == plugin_.string()) return &p;
    return nullptr;
  }
};

TEST_F(InsecurePluginsCli, PluginsShowsTheRefusalAndTheFlagLoadsWithAWarning) {
  ::chmod(dir_.c_str(), 0777);
  const auto refused = run_process(plugtrain("plugins --json"), false);
  ASSERT_EQ(refused.exit_code, 0) << refused.out;
  const nlohmann::json refused_listing = nlohmann::json::parse(refused.out);
  const nlohmann::json* p = plugin_in(refused_listing);
  ASSERT_NE(p, nullptr) << refused.out;
  EXPECT_EQ(p->at("status"), "refused");
  EXPECT_NE(p->at("reason").get<std::string>().find("is world-writable"), std::string::npos) << *p;

  const auto allowed = run_process(plugtrain("plugins --json --allow-insecure-plugins 2>/dev/null"), false);
  ASSERT_EQ(allowed.exit_code, 0) << allowed.out;
  const nlohmann::json allowed_listing = nlohmann::json::parse(allowed.out);
  p = plugin_in(allowed_listing);
  ASSERT_NE(p, nullptr) << allowed.out;
  EXPECT_EQ(p->at("status"), "usable");
  EXPECT_NE(p->value("warning", "").find("is world-writable"), std::string::npos) << *p;
  const auto warned = run_process(plugtrain("plugins --allow-insecure-plugins 2>&1 >/dev/null"), false);
  EXPECT_NE(warned.out.find("plugtrain: warning: --allow-insecure-plugins: loading " + plugin_.string()),
            std::string::npos)
      << warned.out;
}

TEST_F(InsecurePluginsCli, DoctorListsTheSearchPathWithOwnersAndModes) {
  ::chmod(dir_.c_str(), 0777);
  const auto r = run_process(plugtrain("doctor --json"), false);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_GE(j.at("search_path").size(), 2u) << r.out;
  const nlohmann::json& mine = j.at("search_path")[0];
  EXPECT_EQ(mine.at("path"), dir_.string());
  EXPECT_EQ(mine.at("mode"), "drwxrwxrwx");
  EXPECT_FALSE(mine.at("owner").get<std::string>().empty());
  EXPECT_FALSE(mine.at("group").get<std::string>().empty());
  EXPECT_EQ(mine.at("secure"), false);
  EXPECT_NE(mine.at("problem").get<std::string>().find("o-w " + dir_.string()), std::string::npos) << mine;
  const nlohmann::json& bundled = j.at("search_path").back();
  EXPECT_EQ(bundled.at("origin"), "beside executable");
  EXPECT_EQ(bundled.at("secure"), true) << bundled;
  EXPECT_EQ(bundled.at("mode").get<std::string>().front(), 'd');

  const auto text = run_process(plugtrain("doctor"));
  EXPECT_NE(text.out.find(dir_.string() + "  (--plugin-path)  "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(" drwxrwxrwx  INSECURE: folder " + dir_.string()), std::string::npos) << text.out;
}

// A sweep's trials are processes of their own: each gets the flag, or the task its plugin gives is unknown there.
TEST_F(InsecurePluginsCli, ASweepPassesTheFlagToItsTrials) {
  fs::copy_file(fs::path(PLUGTRAIN_TEST_PLUGIN_DIR) / "focal_loss" / "focal_loss.so", dir_ / "focal_loss.so");
  ::chmod((dir_ / "focal_loss.so").c_str(), 0755);
  ::chmod(dir_.c_str(), 0777);
  const fs::path work = dir_ / "work";
  fs::create_directory(work);
  testing::ExperimentToml("insecure")
      .on_cpu()
      .set_keys("model", {{"name", "mlp"}, {"hidden", {8}}})
      .set_keys("data", {{"dataset", "synthetic"},
                         {"synthetic_shape", {1, 4, 4}},
                         {"synthetic_classes", 2},
                         {"synthetic_train_size", 32},
                         {"synthetic_test_size", 16},
                         {"batch_size", 16}})
      .set("task.name", "focal")
      .set_keys("train", {{"epochs", 1}, {"log_interval", 0}})
      .set_in("sweep", "\"experiment.seed\"", {1})
      .write(work / "exp.toml");
  const auto r = run_process(testing::plugtrain_command(
      "sweep exp.toml --allow-insecure-plugins --plugin-path " + shell_quote(dir_.string()), "", work));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("1 of 1 trials finished, 0 failed"), std::string::npos) << r.out;
}

}  // namespace plugin_permissions_test
}  // namespace plugtrain
