// The CPU-only machine: the CUDA plugin's libraries cannot be loaded. The plugin still loads,
// reports `libraries_missing` with the dynamic loader's message, and training runs on the CPU.
// PLUGTRAIN_CUDA_RUNTIME points the plugin at a runtime part whose dependency is missing.
// ctest-label: unit
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "support/experiment_toml.h"
#include "support/run_process.h"

namespace plugtrain {
namespace cuda_unavailable_test {

using testing::run_process;
using testing::shell_quote;
namespace fs = std::filesystem;

std::string with_broken_cuda_runtime(const std::string& runtime, const std::string& args) {
  return testing::plugtrain_command(args, "PLUGTRAIN_CUDA_RUNTIME=" + shell_quote(runtime));
}

const nlohmann::json* cuda_entry(const nlohmann::json& j) {
  for (const auto& p : j["plugins"])
    if (p["name"] == "cuda") return &p;
  return nullptr;
}

TEST(CudaUnavailable, MissingLibrariesAreReportedWithTheLoadersMessage) {
  const std::string runtime = std::string(PLUGTRAIN_TEST_PLUGIN_DIR) + "/missing_dependency/test_missing_dependency.so";
  auto r = run_process(with_broken_cuda_runtime(runtime, "plugins --json"), false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json* cuda = cuda_entry(j);
  if (!cuda) GTEST_SKIP() << "built without the cuda backend";
  EXPECT_EQ((*cuda)["status"], "unusable");
  EXPECT_EQ((*cuda)["probe"]["code"], "libraries_missing");
  EXPECT_NE((*cuda)["reason"].get<std::string>().find(
                "CUDA libraries cannot be loaded: libplugtrain_vanished.so: cannot open shared object file"),
            std::string::npos)
      << (*cuda)["reason"];
}

TEST(CudaUnavailable, ARuntimePartWithoutItsSymbolsIsNamed) {
  const std::string runtime = std::string(PLUGTRAIN_TEST_PLUGIN_DIR) + "/not_a_plugin/test_not_a_plugin.so";
  auto r = run_process(with_broken_cuda_runtime(runtime, "plugins --json"), false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json* cuda = cuda_entry(j);
  if (!cuda) GTEST_SKIP() << "built without the cuda backend";
  EXPECT_EQ((*cuda)["probe"]["code"], "libraries_missing");
  EXPECT_NE((*cuda)["reason"].get<std::string>().find("is not plugtrain's CUDA runtime part"), std::string::npos);
}

// The runtime part is code the plugin loads itself: held to the host's rule for plugins
// (docs/plugins.md, "Who may change a plugin"), so that it is no way around it.
TEST(CudaUnavailable, ARuntimePartOthersCouldChangeOrARelativePathIsNotLoaded) {
  auto reason = [](const std::string& runtime) {
    const auto r = run_process(with_broken_cuda_runtime(runtime, "plugins --json"), false);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    const nlohmann::json* cuda = cuda_entry(j);
    return cuda ? (*cuda)["reason"].get<std::string>() : std::string("no cuda backend");
  };
  const std::string relative = reason("cuda/plugtrain_cuda_runtime.so");
  if (relative == "no cuda backend") GTEST_SKIP() << "built without the cuda backend";
  EXPECT_NE(relative.find("PLUGTRAIN_CUDA_RUNTIME 'cuda/plugtrain_cuda_runtime.so' is not an absolute path"),
            std::string::npos)
      << relative;
  const fs::path dir = fs::temp_directory_path() / ("plugtrain-cudart-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path copy = dir / "runtime.so";
  fs::copy_file(std::string(PLUGTRAIN_TEST_PLUGIN_DIR) + "/not_a_plugin/test_not_a_plugin.so", copy,
                fs::copy_options::overwrite_existing);
  fs::permissions(copy, fs::perms::others_write, fs::perm_options::add);
  const std::string writable = reason(copy.string());
  EXPECT_NE(writable.find(copy.string() + " is world-writable: chmod o-w " + copy.string()), std::string::npos)
      << writable;
  // A link in a private folder to a file others cannot write, in a folder anyone can (0777, not
  // sticky: anyone may swap the file): judged by where it leads.
  const fs::path open_dir = dir / "open", private_dir = dir / "private";
  fs::create_directories(open_dir);
  fs::create_directories(private_dir);
  fs::permissions(open_dir, fs::perms::all);
  fs::permissions(private_dir, fs::perms::owner_all);
  fs::copy_file(copy, open_dir / "runtime.so");
  fs::permissions(open_dir / "runtime.so", fs::perms::others_write, fs::perm_options::remove);
  fs::create_symlink(open_dir / "runtime.so", private_dir / "runtime.so");
  const std::string linked = reason((private_dir / "runtime.so").string());
  const std::string real_dir = fs::canonical(open_dir).string();
  EXPECT_NE(linked.find(real_dir + " is world-writable: chmod o-w " + real_dir), std::string::npos) << linked;
  fs::remove_all(dir);
}

TEST(CudaUnavailable, TrainingStillRunsOnTheCpu) {
  const fs::path dir = fs::temp_directory_path() / ("plugtrain-nocuda-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  testing::ExperimentToml("nocuda")
      .set("experiment.output", (dir / "runs").string())
      .set("model.name", "mlp")
      .set("model.hidden", {16})
      .set("data.dataset", "synthetic")
      .set("data.synthetic_shape", {1, 4, 4})
      .set("data.synthetic_train_size", 200)
      .set("data.synthetic_test_size", 50)
      .set("train.epochs", 1)
      .write(dir / "exp.toml");
  const std::string runtime = std::string(PLUGTRAIN_TEST_PLUGIN_DIR) + "/missing_dependency/test_missing_dependency.so";
  auto r = run_process(with_broken_cuda_runtime(runtime, "run " + shell_quote((dir / "exp.toml").string())));
  fs::remove_all(dir);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("backend: skipped cuda: libraries_missing: CUDA libraries cannot be loaded:"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("backend: chose cpu"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("done: final test accuracy"), std::string::npos) << r.out;
}

}  // namespace cuda_unavailable_test
}  // namespace plugtrain
