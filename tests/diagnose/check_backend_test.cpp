// `plugtrain check-backend` as a backend author runs it: the CPU passes every check, a backend
// that breaks a rule fails that check (test plugin rulebreaker, PLUGTRAIN_TEST_BREAK), a device
// whose tensors hold no values fails the round trips and operators (smokefail: the meta device),
// and bad names are one line. Then the comparison the checks judge with, in process.
// ctest-label: e2e
// ctest-label ConformanceCompare: unit
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "diagnose/conformance_compare.h"
#include "support/run_process.h"

namespace plugtrain {
namespace check_backend_test {

using testing::run_process;
using testing::shell_quote;

const std::string kTestPlugins = PLUGTRAIN_TEST_PLUGIN_DIR;

std::string plugtrain(const std::string& args, const std::string& env = "") {
  return testing::plugtrain_command(args, env);
}

// The checks of a --json report, by name: "PASS", "FAIL" or "SKIP".
std::map<std::string, std::string> results(const nlohmann::json& j) {
  std::map<std::string, std::string> out;
  for (const auto& c : j.at("checks")) out[c.at("name").get<std::string>()] = c.at("result").get<std::string>();
  return out;
}

int lines(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) n += !line.empty();
  return n;
}

TEST(CheckBackend, TheCpuPassesEveryCheckAndTheJsonListsThem) {
  auto r = run_process(plugtrain("check-backend cpu --json"), /*merge_stderr=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["backend"], "cpu");
  EXPECT_EQ(j["device"], "cpu");
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["failed"], 0);
  std::set<std::string> groups;
  for (const auto& c : j["checks"]) {
    groups.insert(c["group"].get<std::string>());
    EXPECT_NE(c["result"], "FAIL") << c;
    EXPECT_FALSE(c["detail"].get<std::string>().empty()) << c;
  }
  EXPECT_EQ(groups, (std::set<std::string>{"backend", "transfer", "op", "optimizer", "model", "checkpoint"}));
  const auto by_name = results(j);
  for (const char* name :
       {"probe", "plan single", "plan dp", "plan ddp", "loader settings", "memory figures", "float32", "float64",
        "bool", "conv2d", "batch_norm train", "batch_norm eval", "cross_entropy", "_fused_adamw_",
        "_foreach_addcdiv_ scalars", "mlp", "resnet18", "round trip"})
    EXPECT_EQ(by_name.count(name) ? by_name.at(name) : "missing", "PASS") << name;
  // The CPU has every dtype; what it has no use for (pinned copies) is a SKIP with its reason.
  EXPECT_EQ(by_name.at("float32 pinned"), "SKIP");
  EXPECT_TRUE(j["cpu_fallbacks"].is_object());
}

TEST(CheckBackend, TheTableHasOneRowPerCheckAndAClosingLine) {
  auto r = run_process(plugtrain("check-backend cpu --only backend,transfer"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("check-backend cpu: device cpu ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  backend   probe "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  transfer  float32 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PASS"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("  op  "), std::string::npos) << "only the groups asked for: " << r.out;
  EXPECT_NE(r.out.find("operators that fell back to the CPU during the checks: none"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("check-backend cpu: passed: "), std::string::npos) << r.out;
}

// Each broken rule fails its own check, and only that one; unbroken, the backend passes.
TEST(CheckBackend, ABackendThatBreaksARuleFailsThatCheck) {
  const std::string path = " --plugin-path " + shell_quote(kTestPlugins + "/rule_breaking");
  const std::map<std::string, std::vector<std::string>> failing = {{"", {}},
                                                                   {"memory", {"memory figures"}},
                                                                   {"probe", {"probe"}},
                                                                   {"plan", {"plan dp", "plan ddp"}},
                                                                   {"loader", {"loader settings"}}};
  for (const auto& [rule, checks] : failing) {
    auto r =
        run_process(plugtrain("check-backend rulebreaker --only backend --json" + path, "PLUGTRAIN_TEST_BREAK=" + rule),
                    /*merge_stderr=*/false);
    EXPECT_EQ(r.exit_code, checks.empty() ? 0 : 1) << rule << ": " << r.out;
    const auto j = nlohmann::json::parse(r.out);
    for (const auto& c : j["checks"]) {
      const bool should_fail = std::count(checks.begin(), checks.end(), c["name"].get<std::string>()) > 0;
      EXPECT_EQ(c["result"] == "FAIL", should_fail) << rule << ": " << c;
    }
  }
  auto probe = run_process(plugtrain("check-backend rulebreaker --only backend" + path, "PLUGTRAIN_TEST_BREAK=probe"));
  EXPECT_NE(probe.out.find("the second probe answered differently: device 0: name 'the CPU as probed by process "),
            std::string::npos)
      << probe.out;
  auto memory =
      run_process(plugtrain("check-backend rulebreaker --only backend" + path, "PLUGTRAIN_TEST_BREAK=memory"));
  EXPECT_NE(memory.out.find("free 16.0 GiB > total 8.0 GiB"), std::string::npos) << memory.out;
  auto plan = run_process(plugtrain("check-backend rulebreaker --only backend" + path, "PLUGTRAIN_TEST_BREAK=plan"));
  EXPECT_NE(plan.out.find("plans ddp over [0], but capabilities().strategies lists only single"), std::string::npos)
      << plan.out;
  EXPECT_NE(plan.out.find("check-backend rulebreaker: FAILED: "), std::string::npos) << plan.out;
}

TEST(CheckBackend, ADeviceWithoutValuesFailsTheRoundTripsAndOperators) {
  auto r = run_process(plugtrain("check-backend smokefail --only transfer,op --json --plugin-path " +
                                 shell_quote(kTestPlugins + "/smoke_failing")),
                       /*merge_stderr=*/false);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const auto by_name = results(nlohmann::json::parse(r.out));
  EXPECT_EQ(by_name.at("float32"), "FAIL");
  EXPECT_EQ(by_name.at("linear"), "FAIL");
}

TEST(CheckBackend, AnUnknownNameIsOneLineListingTheKnownBackends) {
  auto r = run_process(plugtrain("check-backend nosuch"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(lines(r.out), 1) << r.out;
  EXPECT_NE(r.out.find("no backend named 'nosuch'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("known backends: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cpu"), std::string::npos) << r.out;

  auto group = run_process(plugtrain("check-backend cpu --only ops"));
  EXPECT_EQ(group.exit_code, 2) << group.out;
  EXPECT_EQ(lines(group.out), 1) << group.out;
  EXPECT_NE(group.out.find("no group of checks named 'ops'"), std::string::npos) << group.out;
}

TEST(CheckBackend, AnUnusableBackendIsOneLineWithItsReason) {
  auto r =
      run_process(plugtrain("check-backend throwprobe --plugin-path " + shell_quote(kTestPlugins + "/throwing_probe")));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(lines(r.out), 1) << r.out;
  EXPECT_NE(r.out.find("backend 'throwprobe' is not usable (error): "), std::string::npos) << r.out;
}

// The comparison itself: what it lets through and what it does not.
TEST(ConformanceCompare, JudgesWithinATolerancePlacesNanAndComparesBytes) {
  const at::Tensor reference = at::tensor({1.0f, -2.0f, 4.0f});
  Comparison close;
  close.close("near", reference + 1e-4, reference);
  EXPECT_TRUE(close.ok());
  EXPECT_NE(close.result("x").detail.find("worst: near "), std::string::npos) << close.result("x").detail;

  Comparison far;
  far.close("far", reference + 0.1, reference);
  EXPECT_FALSE(far.ok());
  EXPECT_NE(far.result("x").detail.find("far: max error 1.0e-01 where"), std::string::npos) << far.result("x").detail;

  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  Comparison nans;
  nans.close("same places", at::tensor({nan, inf, 1.0f}), at::tensor({nan, inf, 1.0f}));
  EXPECT_TRUE(nans.ok());
  nans.close("other places", at::tensor({1.0f, inf, nan}), at::tensor({nan, inf, 1.0f}));
  EXPECT_FALSE(nans.ok());

  Comparison infinities;
  infinities.close("sign", at::tensor({-inf}), at::tensor({inf}));
  EXPECT_FALSE(infinities.ok());

  Comparison bits;
  bits.exact("zero", at::tensor({0.0f}), at::tensor({0.0f}));
  EXPECT_TRUE(bits.ok());
  EXPECT_EQ(bits.result("x").status, CheckStatus::pass);
  bits.exact("negative zero", at::tensor({-0.0f}), at::tensor({0.0f}));
  EXPECT_FALSE(bits.ok());
  EXPECT_EQ(bits.result("x").status, CheckStatus::fail);

  Comparison shapes;
  shapes.close("shape", at::zeros({2, 3}), at::zeros({3, 2}));
  EXPECT_NE(shapes.result("x").detail.find("shape 2x3, the CPU's is 3x2"), std::string::npos);
}

}  // namespace check_backend_test
}  // namespace plugtrain
