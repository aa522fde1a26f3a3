// Automatic backend selection: priority order, disabled backends, the M1/M2 policy, and a
// named backend that is unusable (no silent fallback).
// ctest-label: unit
#include <gtest/gtest.h>

#include "select/backend_selection.h"

namespace plugtrain {
namespace selection_test {

namespace fs = std::filesystem;

PluginHost host_with_fake_mps() {
  SearchOptions o;
  o.cli_paths = {fs::path(PLUGTRAIN_TEST_PLUGIN_DIR) / "fake_mps"};
  o.use_environment = false;
  return PluginHost(o);
}

std::string all(const BackendChoice& c) {
  std::string s;
  for (const auto& r : c.reasons) s += r + "\n";
  return s;
}

TEST(Selection, AutomaticOrderSkipsUnusableWithReasons) {
  SearchOptions o;
  o.use_environment = false;
  PluginHost host(o);
  Experiment e;
  BackendChoice c = select_backend(host, e);
  ASSERT_NE(c.backend, nullptr);
  if (!fs::exists("/dev/nvidiactl")) {
    EXPECT_EQ(c.backend->name(), "cpu");
    ASSERT_GE(c.reasons.size(), 2u);
    EXPECT_EQ(c.reasons[0].rfind("skipped cuda: ", 0), 0u) << all(c);
    EXPECT_EQ(c.reasons.back().rfind("chose cpu (first usable in order cuda, mps, cpu)", 0), 0u) << all(c);
  }
}

// Third-party backends take their place by priority: "faulty" (50) comes before the CPU (0),
// "testgood" (0) after it (ties by name); backend.prefer overrides the order.
TEST(Selection, PluginPriorityOrdersAutomaticSelectionAndPreferOverridesIt) {
  SearchOptions o;
  o.cli_paths = {fs::path(PLUGTRAIN_TEST_PLUGIN_DIR) / "good", fs::path(PLUGTRAIN_TEST_PLUGIN_DIR) / "fault_backend"};
  o.use_environment = false;
  PluginHost host(o);
  Experiment e;
  EXPECT_EQ(automatic_order(host, e), (std::vector<std::string>{"cuda", "mps", "faulty", "cpu", "testgood"}));
  BackendChoice c = select_backend(host, e);
  ASSERT_NE(c.backend, nullptr);
  if (!fs::exists("/dev/nvidiactl")) EXPECT_EQ(c.backend->name(), "faulty") << all(c);
  e.backend.prefer = {"testgood", "cpu"};
  EXPECT_EQ(automatic_order(host, e), e.backend.prefer);
  EXPECT_EQ(select_backend(host, e).backend->name(), "testgood");
}

TEST(Selection, MpsOnM2IsPassedOverForTheCpuAndSaysWhy) {
  PluginHost host = host_with_fake_mps();
  Experiment e;
  e.backend.prefer = {"mps", "cpu"};
  BackendChoice c = select_backend(host, e);
  EXPECT_EQ(c.backend->name(), "cpu") << all(c);
  EXPECT_NE(all(c).find("skipped mps: usable, but on Apple M2 the CPU is often faster"), std::string::npos) << all(c);
}

TEST(Selection, ForceMpsOrNamingItChoosesMpsOnM2) {
  PluginHost host = host_with_fake_mps();
  Experiment forced;
  forced.backend.prefer = {"mps", "cpu"};
  forced.backend.force = {"mps"};
  EXPECT_EQ(select_backend(host, forced).backend->name(), "mps");
  Experiment named;
  named.backend.name = "mps";
  EXPECT_EQ(select_backend(host, named).backend->name(), "mps");
}

TEST(Selection, DisabledBackendsAreSkipped) {
  PluginHost host = host_with_fake_mps();
  Experiment e;
  e.backend.prefer = {"mps", "cpu"};
  e.backend.force = {"mps"};
  e.backend.disable = {"mps"};
  BackendChoice c = select_backend(host, e);
  EXPECT_EQ(c.backend->name(), "cpu");
  EXPECT_NE(all(c).find("skipped mps: disabled"), std::string::npos) << all(c);
}

TEST(Selection, NamedUnusableOrUnknownBackendIsAnErrorNotAFallback) {
  SearchOptions o;
  o.use_environment = false;
  PluginHost host(o);
  Experiment e;
  e.backend.name = "cdua";
  try {
    select_backend(host, e);
    FAIL();
  } catch (const std::runtime_error& err) {
    EXPECT_NE(
        std::string(err.what()).find("backend 'cdua' is not among the loaded backend plugins (did you mean 'cuda'?)"),
        std::string::npos)
        << err.what();
  }
  if (!fs::exists("/dev/nvidiactl")) {
    e.backend.name = "cuda";
    EXPECT_THROW(select_backend(host, e), std::runtime_error);
  }
}

}  // namespace selection_test
}  // namespace plugtrain
