// `plugtrain doctor` and `plugtrain bench` as a user runs them: what they print, their JSON, and
// their exit codes, with a backend that probes usable but cannot train (test plugin smokefail).
// ctest-label: e2e
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <torch/version.h>

#include "plugtrain/abi.h"
#include "support/experiment_toml.h"
#include "support/run_process.h"

namespace plugtrain {
namespace diagnose_test {

using testing::run_process;
using testing::shell_quote;
using ::testing::StartsWith;
namespace fs = std::filesystem;

const std::string kSmokeFailing = std::string(PLUGTRAIN_TEST_PLUGIN_DIR) + "/smoke_failing";

std::string plugtrain(const std::string& args) { return testing::plugtrain_command(args); }

TEST(Doctor, ChecksVersionsPluginsAndPassesTheCpuSmokeTest) {
  const auto r = run_process(plugtrain("doctor --json"), /*merge_stderr=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("versions").at("LibTorch"), TORCH_VERSION);
  EXPECT_EQ(j.at("versions").at("SDK ABI"),
            std::to_string(PLUGTRAIN_SDK_ABI_MAJOR) + "." + std::to_string(PLUGTRAIN_SDK_ABI_MINOR));
  EXPECT_GE(std::stoi(j.at("system").at("cores").get<std::string>()), 1);
  const auto& plugins = j.at("plugins");
  EXPECT_TRUE(std::any_of(plugins.begin(), plugins.end(),
                          [](const nlohmann::json& p) { return p.at("name") == "cpu" && p.at("kind") == "backend"; }))
      << "the plugin list: " << plugins;
  bool cpu_passed = false;
  for (const auto& smoke : j.at("smoke_tests"))
    if (smoke.at("backend") == "cpu" && smoke.at("what") == "1 device") {
      cpu_passed = smoke.at("passed");
      EXPECT_LT(smoke.at("last_loss").get<double>(), smoke.at("first_loss").get<double>()) << smoke;
    }
  EXPECT_TRUE(cpu_passed) << j.at("smoke_tests");
  EXPECT_EQ(j.at("ok"), true);
  EXPECT_THAT(j.at("verdict").get<std::string>(), StartsWith("every usable backend passed"));
  // Outside a launcher: this host's interfaces (the loopback at least), no world, no rendezvous.
  const nlohmann::json& network = j.at("network");
  EXPECT_TRUE(
      std::any_of(network.at("interfaces").begin(), network.at("interfaces").end(),
                  [](const nlohmann::json& i) { return i.at("name") == "lo" && i.at("address") == "127.0.0.1"; }))
      << network;
  EXPECT_TRUE(network.at("world").is_null()) << network;
  EXPECT_TRUE(network.at("rendezvous").is_null()) << network;
}

TEST(Doctor, ABackendThatCannotTrainFailsWithItsReason) {
  auto json = run_process(plugtrain("doctor --json --plugin-path " + shell_quote(kSmokeFailing)), false);
  EXPECT_EQ(json.exit_code, 1);
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["ok"], false);
  EXPECT_THAT(j["verdict"].get<std::string>(), StartsWith("failed: smokefail (1 device): "));
  // In priority order: on a GPU machine the GPU's first (cuda's 200), then smokefail (10) and
  // the CPU (0); every backend but smokefail passes.
  const nlohmann::json& smoke_tests = j["smoke_tests"];
  int failing = -1, cpu = -1;
  for (int i = 0; i < int(smoke_tests.size()); ++i) {
    const nlohmann::json& smoke = smoke_tests[i];
    if (smoke["backend"] == "smokefail") {
      failing = i;
      EXPECT_EQ(smoke["passed"], false);
      EXPECT_FALSE(smoke.value("reason", std::string()).empty()) << smoke.dump();
      continue;
    }
    EXPECT_EQ(smoke["passed"], true) << smoke.dump();
    EXPECT_LT(smoke["last_loss"].get<double>(), smoke["first_loss"].get<double>()) << smoke.dump();
    if (smoke["backend"] == "cpu") cpu = i;
  }
  ASSERT_GE(failing, 0) << j.dump();
  ASSERT_GE(cpu, 0) << j.dump();
  EXPECT_LT(failing, cpu) << j.dump();
}

TEST(Doctor, WithAnExperimentOnlyItsBackendIsJudged) {
  const fs::path dir = testing::scratch_dir("doctor");
  std::ofstream(dir / "exp.toml")
      << "[backend]\nname = \"cpu\"\n[model]\nname = \"mlp\"\n[data]\ndataset = \"synthetic\"\n";
  const auto r = run_process(plugtrain("doctor --json " + shell_quote((dir / "exp.toml").string()) + " --plugin-path " +
                                       shell_quote(kSmokeFailing)),
                             /*merge_stderr=*/false);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("judged_backend"), "cpu");
  ASSERT_FALSE(j.at("smoke_tests").empty());
  for (const auto& smoke : j.at("smoke_tests")) {
    EXPECT_EQ(smoke.at("backend"), "cpu") << "only the experiment's backend is judged";
    EXPECT_EQ(smoke.at("passed"), true) << smoke;
  }
  EXPECT_EQ(j.at("verdict"), "the experiment's backend, cpu, passed");
  fs::remove_all(dir);
}

TEST(Bench, TimesEachBatchSizeOnEachBackendAndSaysWhichFailed) {
  const fs::path dir = testing::scratch_dir("bench");
  std::ofstream(dir / "exp.toml") << "[model]\nname = \"mlp\"\nhidden = [32]\n[data]\ndataset = \"synthetic\"\n";
  auto r =
      run_process(plugtrain("bench " + shell_quote((dir / "exp.toml").string()) +
                            " --backends cpu,smokefail --batch-sizes 16,64 --steps 4 --warmup 1 --json --plugin-path " +
                            shell_quote(kSmokeFailing)),
                  false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto rows = nlohmann::json::parse(r.out);
  ASSERT_EQ(rows.size(), 4u) << r.out;
  for (const auto& row : rows) {
    if (row["backend"] == "smokefail") {
      EXPECT_FALSE(row["error"].get<std::string>().empty()) << row;
      continue;
    }
    EXPECT_EQ(row["device"], "cpu");
    EXPECT_GT(row["samples_per_second"].get<double>(), 0) << row;
    EXPECT_LE(row["step_ms"]["p10"].get<double>(), row["step_ms"]["median"].get<double>());
    EXPECT_LE(row["step_ms"]["median"].get<double>(), row["step_ms"]["p90"].get<double>());
    EXPECT_DOUBLE_EQ(row["vs_cpu"].get<double>(), 1.0);
  }
  EXPECT_EQ(rows[0]["batch_size"], 16);
  EXPECT_EQ(rows[2]["batch_size"], 64);
  auto table = run_process(plugtrain("bench " + shell_quote((dir / "exp.toml").string()) + " --steps 3 --warmup 0"));
  ASSERT_EQ(table.exit_code, 0) << table.out;
  EXPECT_NE(table.out.find("BACKEND    DEVICE    BATCH    SAMPLES/S"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("1.00x"), std::string::npos) << table.out;
  fs::remove_all(dir);
}

TEST(Fastest, MeasuresEveryUsableBackendChoosesTheFastestAndRemembersIt) {
  const fs::path dir = testing::scratch_dir("fastest");
  testing::ExperimentToml("experiment")  // the default name
      .set("experiment.output", (dir / "runs").string())
      .set("backend.select", "fastest")
      .set("backend.prefer", {"smokefail", "cpu"})  // only these two: on a GPU machine the GPU would be measured too
      .set("model.name", "mlp")
      .set("model.hidden", {16})
      .set("data.dataset", "synthetic")
      .set("data.synthetic_train_size", 256)
      .set("train.epochs", 1)
      .write(dir / "exp.toml");
  const std::string run = testing::plugtrain_command(
      "run " + shell_quote((dir / "exp.toml").string()) + " --plugin-path " + shell_quote(kSmokeFailing),
      "XDG_CACHE_HOME=" + shell_quote((dir / "cache").string()));
  auto first = run_process(run);
  ASSERT_EQ(first.exit_code, 0) << first.out;
  EXPECT_NE(first.out.find("backend: measured smokefail: it failed: "), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("backend: measured cpu: "), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("backend: chose cpu (fastest of smokefail, cpu)"), std::string::npos) << first.out;
  ASSERT_TRUE(fs::exists(dir / "cache" / "plugtrain" / "fastest.json"));
  auto second = run_process(run);
  ASSERT_EQ(second.exit_code, 0) << second.out;
  EXPECT_EQ(second.out.find("backend: measured"), std::string::npos) << "the cached choice: " << second.out;
  EXPECT_NE(second.out.find("measured before on this machine"), std::string::npos) << second.out;
  auto again = run_process(run + " --no-cache");
  EXPECT_NE(again.out.find("backend: measured cpu: "), std::string::npos) << again.out;
  fs::remove_all(dir);
}

}  // namespace diagnose_test
}  // namespace plugtrain
