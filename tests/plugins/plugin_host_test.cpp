// The plugin host against every kind of bad plugin: each is refused or reported with its
// reason, and the good plugins found alongside are still listed and usable.
// ctest-label: unit
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <c10/core/DeviceType.h>
#include <gtest/gtest.h>

#include "plugins/plugin_error.h"
#include "plugins/plugin_host.h"
#include "support/run_process.h"

namespace plugtrain {
namespace plugin_host_test {

namespace fs = std::filesystem;
const fs::path kTestPlugins = PLUGTRAIN_TEST_PLUGIN_DIR;

// Host searching the given test folders first, then the real plugins beside the test
// binary (build/lib/plugtrain/plugins); PLUGTRAIN_PLUGIN_PATH is ignored.
PluginHost host_with(std::vector<fs::path> folders) {
  SearchOptions options;
  options.cli_paths = std::move(folders);
  options.use_environment = false;
  return PluginHost(options);
}

const PluginRecord* find_by_file(const PluginHost& host, const std::string& fragment) {
  for (const auto& r : host.plugins())
    if (r.path.string().find(fragment) != std::string::npos) return &r;
  return nullptr;
}

const PluginRecord* find_by_name(const PluginHost& host, const std::string& name) {
  for (const auto& r : host.plugins())
    if (r.has_handshake && r.handshake.name == name) return &r;
  return nullptr;
}

// Whatever else is on the path, the real CPU backend and the good test backend still work.
void expect_good_plugins_usable(PluginHost& host) {
  BackendHandle* cpu = host.backend("cpu");
  ASSERT_NE(cpu, nullptr) << "cpu backend missing";
  EXPECT_TRUE(cpu->probe().usable()) << cpu->probe().message;
  BackendHandle* good = host.backend("testgood");
  ASSERT_NE(good, nullptr) << "testgood backend missing";
  EXPECT_TRUE(good->probe().usable());
}

PluginHost host_with_case(const std::string& folder) {
  return host_with({kTestPlugins / folder, kTestPlugins / "good"});
}

// The init hook runs once per process, however many hosts load the plugin (a sweep or
// `bench` makes several); shutdown comes at the process's end.
TEST(PluginHost, InitHookRunsOncePerProcess) {
  const fs::path log = testing::scratch_dir("hooks") / "hooks.txt";
  ::setenv("PLUGTRAIN_TEST_HOOK_LOG", log.c_str(), 1);
  for (int i = 0; i < 3; ++i) {
    PluginHost host = host_with({kTestPlugins / "fault_backend"});
    EXPECT_NE(host.backend("faulty"), nullptr);
  }
  ::unsetenv("PLUGTRAIN_TEST_HOOK_LOG");
  EXPECT_EQ(testing::slurp(log), "init\n");
  fs::remove_all(log.parent_path());
}

TEST(PluginHost, RefusesOtherLibTorchVersion) {
  PluginHost host = host_with_case("bad_torch");
  const PluginRecord* r = find_by_name(host, "badtorch");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->status, PluginStatus::refused);
  EXPECT_NE(r->reason.find("built against LibTorch 1.0.0, host uses LibTorch " TORCH_VERSION), std::string::npos)
      << r->reason;
  expect_good_plugins_usable(host);
}

TEST(PluginHost, ProbeThatThrowsMakesBackendUnusableNamingThePlugin) {
  PluginHost host = host_with_case("throwing_probe");
  BackendHandle* b = host.backend("throwprobe");
  ASSERT_NE(b, nullptr);
  const ProbeResult& probe = b->probe();
  EXPECT_FALSE(probe.usable());
  EXPECT_EQ(probe.code, ProbeCode::error);
  EXPECT_EQ(probe.message, "plugin 'throwprobe': probe threw: sensor exploded");
  expect_good_plugins_usable(host);
}

// bench, `fastest` and in-process sweeps make a PluginHost per measurement: after the first one
// trained on a GPU, a probe in a forked child would find CUDA unable to start (an H200 said
// "cuda is unusable: cuInit failed: initialization error" for every row after the first).
TEST(PluginHost, ABackendStartedInThisProcessIsStillUsableToTheNextHost) {
  PluginHost first = host_with({kTestPlugins / "fork_shy"});
  BackendHandle* started = first.backend("forkshy");
  ASSERT_NE(started, nullptr);
  ASSERT_TRUE(started->probe().usable()) << started->probe().message;
  started->memory(0);  // the runtime now runs in this process, as after a step on a GPU
  PluginHost second = host_with({kTestPlugins / "fork_shy"});
  const ProbeResult& again = second.backend("forkshy")->probe();
  EXPECT_TRUE(again.usable()) << again.message;
}

TEST(PluginHost, ExceptionFromAnyBackendCallBecomesPluginError) {
  PluginHost host = host_with({kTestPlugins / "good"});
  BackendHandle* good = host.backend("testgood");
  ASSERT_NE(good, nullptr);
  try {
    good->memory(0);
    FAIL() << "memory() should have thrown";
  } catch (const PluginError& e) {
    EXPECT_EQ(e.plugin(), "testgood");
    EXPECT_STREQ(e.what(), "plugin 'testgood': memory threw: memory gauge broken");
  }
}

TEST(PluginHost, ModelsPluginThatThrowsIsRefusedAndRegistersNothing) {
  PluginHost host = host_with_case("throwing_models");
  const PluginRecord* r = find_by_name(host, "throwmodels");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->status, PluginStatus::refused);
  EXPECT_NE(r->reason.find("register threw: registry on fire"), std::string::npos) << r->reason;
  EXPECT_EQ(host.models().find("halfregistered"), nullptr);
  expect_good_plugins_usable(host);
}

TEST(PluginHost, RefusesSharedLibraryThatIsNotAPlugin) {
  PluginHost host = host_with_case("not_a_plugin");
  const PluginRecord* r = find_by_file(host, "test_not_a_plugin.so");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->status, PluginStatus::refused);
  EXPECT_EQ(r->reason, "not a plugtrain plugin (no plugtrain_plugin_info_v1 symbol)");
  expect_good_plugins_usable(host);
}

TEST(PluginHost, MissingDependencyIsRefusedWithTheLoadersMessage) {
  PluginHost host = host_with_case("missing_dependency");
  const PluginRecord* r = find_by_file(host, "test_missing_dependency.so");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->status, PluginStatus::refused);
  EXPECT_NE(r->reason.find("cannot be loaded"), std::string::npos) << r->reason;
  EXPECT_NE(r->reason.find("libplugtrain_vanished.so: cannot open shared object file"), std::string::npos) << r->reason;
  expect_good_plugins_usable(host);
}

TEST(PluginHost, DuplicateNameIsShadowedFirstWins) {
  PluginHost host = host_with({kTestPlugins / "good", kTestPlugins / "duplicate"});
  const PluginRecord* first = find_by_file(host, "good/test_good.so");
  const PluginRecord* second = find_by_file(host, "duplicate/test_good_copy.so");
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(first->status, PluginStatus::loaded);
  EXPECT_EQ(second->status, PluginStatus::shadowed);
  EXPECT_NE(second->reason.find("shadowed by " + first->path.string()), std::string::npos) << second->reason;
  int backends_named_testgood = 0;
  for (auto& b : host.backends()) backends_named_testgood += b.name() == "testgood";
  EXPECT_EQ(backends_named_testgood, 1);
}

TEST(PluginHost, PluginPathComesBeforeTheBundledFolder) {
  // A user's own "cpu" plugin on --plugin-path wins; the bundled one is listed as shadowed.
  fs::path dir = fs::temp_directory_path() / ("plugtrain-own-cpu-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  ::chmod(dir.c_str(), 0755);
  PluginHost bundled_only = host_with({});
  const PluginRecord* bundled = find_by_name(bundled_only, "cpu");
  ASSERT_NE(bundled, nullptr);
  EXPECT_EQ(bundled->origin, "beside executable");
  fs::copy_file(bundled->path, dir / "my_cpu.so");

  PluginHost host = host_with({dir});
  fs::remove_all(dir);
  const PluginRecord* mine = find_by_file(host, "my_cpu.so");
  const PluginRecord* shadowed = find_by_file(host, bundled->path.string());
  ASSERT_NE(mine, nullptr);
  ASSERT_NE(shadowed, nullptr);
  EXPECT_EQ(mine->status, PluginStatus::loaded);
  EXPECT_EQ(mine->origin, "--plugin-path");
  EXPECT_EQ(shadowed->status, PluginStatus::shadowed);
}

// Plugins that others could change: plugin_permissions_test.cpp.

}  // namespace plugin_host_test
}  // namespace plugtrain

namespace plugtrain {
namespace plugin_host_test {

// A backend whose device type LibTorch cannot parse: a PrivateUse1 name with a digit, or one
// its plugin never registered. The host says so when it first asks, naming the plugin.
class UnparsableDeviceBackend final : public Backend {
 public:
  Capabilities capabilities() const override { return Capabilities{"emu2"}; }
  ProbeResult probe() override { return {ProbeCode::usable, "", {DeviceInfo{}}}; }
  LoaderConfig loader_config(const std::vector<int>&) override { return {}; }
  MultiDevicePlan plan_multi_device(Strategy, const std::vector<int>&) override { return {}; }
  MemoryInfo memory(int) override { return {}; }
};

TEST(PluginHost, ADeviceTypeLibTorchCannotParseIsRefusedWithTheReason) {
  BackendHandle handle("vendor", std::make_unique<UnparsableDeviceBackend>());
  try {
    handle.capabilities();
    FAIL() << "an unparsable device type was accepted";
  } catch (const PluginError& e) {
    EXPECT_STREQ(e.what(),
                 "plugin 'vendor': capabilities name device_type 'emu2', which LibTorch does not know (a PrivateUse1 "
                 "name must be registered in the plugin's init and be letters and '_' only)");
  }
}

// A backend on a device of the given type, usable with one device.
class TypedBackend final : public Backend {
 public:
  explicit TypedBackend(std::string type) : type_(std::move(type)) {}
  Capabilities capabilities() const override { return Capabilities{type_}; }
  ProbeResult probe() override { return {ProbeCode::usable, "", {DeviceInfo{}}}; }
  LoaderConfig loader_config(const std::vector<int>&) override { return {}; }
  MultiDevicePlan plan_multi_device(Strategy, const std::vector<int>&) override { return {}; }
  MemoryInfo memory(int) override { return {}; }

 private:
  std::string type_;
};

// Once PrivateUse1 is registered, LibTorch's autograd follows that device's streams alone, and a
// backward on another accelerator stops at an internal assert (seen on an H200 with CUDA): such
// a backend is unusable in the process, with the reason; the CPU, the meta device and the
// PrivateUse1 device itself are not affected. In a child process: the registration is for good.
TEST(PluginHost, AnAcceleratorBesideARegisteredPrivateUse1DeviceIsUnusableWithTheReason) {
  EXPECT_EXIT(
      {
        bool usable_before = BackendHandle("xpu", std::make_unique<TypedBackend>("xpu")).probe().usable();
        c10::register_privateuse1_backend("vendordev");
        BackendHandle xpu("xpu", std::make_unique<TypedBackend>("xpu"));
        const ProbeResult& p = xpu.probe();
        const bool refused =
            !p.usable() &&
            p.message.find("a plugin registered the PrivateUse1 device 'vendordev'") != std::string::npos &&
            p.message.find("a backward on xpu fails") != std::string::npos;
        bool others = true;
        for (const char* type : {"cpu", "meta", "vendordev"})
          others = others && BackendHandle(type, std::make_unique<TypedBackend>(type)).probe().usable();
        std::fprintf(stderr, "%s\n", p.message.c_str());
        std::exit(usable_before && refused && others ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "not in this process");
}

}  // namespace plugin_host_test
}  // namespace plugtrain
