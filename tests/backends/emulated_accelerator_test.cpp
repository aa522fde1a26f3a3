// What only the emulated accelerator (examples/plugins/emulated_accelerator) has: a PrivateUse1
// device of its own name, its allocator's capacity, operators that fall back to the CPU, no
// autocast kernels, and PrivateUse1 that one process can hold once. Trained through the
// unchanged host, it must take the CPU's steps for the same seed.
// ctest-label: e2e
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/emulated_runs.h"
#include "support/experiment_toml.h"
#include "support/fashion_mnist.h"
#include "support/image_data.h"
#include "support/metrics_csv.h"
#include "support/run_process.h"

namespace plugtrain {
namespace emulated_accelerator_test {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::run_process;
using testing::shell_quote;
using testing::slurp;
using ::testing::StartsWith;
namespace fs = std::filesystem;

const std::string kFashion = testing::fashion_mnist_dir().string();

class EmulatedAcceleratorTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::scratch_dir("emulated"); }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const testing::ExperimentToml& experiment) const { experiment.write(dir_ / "exp.toml"); }
  void write(const std::string& text) const { std::ofstream(dir_ / "exp.toml") << text; }
  testing::ProcessResult plugtrain(const std::string& args, const std::string& env = "") const {
    return run_process(testing::emulated_command(dir_, args, env));
  }
  testing::ProcessResult run_on(const std::string& backend, const std::string& args = "", const std::string& env = "") {
    return plugtrain("run exp.toml --set backend.name=\\\"" + backend + "\\\" " + args, env);
  }
  nlohmann::json summary(const std::string& name, int n) const { return testing::run_summary(dir_, name, n); }
  // What a command prints with --json (stdout alone, parsed).
  nlohmann::json json_of(const std::string& args) const {
    const auto r = run_process(testing::emulated_command(dir_, args + " --json", ""), /*merge_stderr=*/false);
    return nlohmann::json::parse(r.out);
  }
  static const nlohmann::json* entry_named(const nlohmann::json& list, const std::string& key,
                                           const std::string& name) {
    for (const auto& e : list)
      if (e.at(key) == name) return &e;
    return nullptr;
  }
  std::vector<double> step_losses(const std::string& name, int n) const {
    return testing::step_losses(dir_ / "runs" / name / ("version_" + std::to_string(n)));
  }
  // The CPU and the emulated device take the same first `steps` steps of one experiment and
  // evaluate the weights they reach alike: each step's loss (metrics.csv, every step logged, 9
  // digits: a float32 exactly) and the test loss after them, within kSameArithmetic.
  //
  // Why that tolerance holds on every processor: the emulated device runs the CPU's own kernels
  // on copies of the same tensors, in the same layout, so both sides do the same float32
  // arithmetic in the same order. Three things would make the kernels differ, and are set
  // alike on both sides: the optimizer's form (foreach: by default the CPU would take the fused
  // kernel, which the emulated device lacks); dropout (off: the two draw masks through different
  // kernels); and the memory format (contiguous: in channels-last the CPU's convolutions run
  // oneDNN's channels-last path directly, the emulated device's reach it through
  // convolution_overrideable and the fallback, and the two round differently: the convnet's
  // losses differ in the last bit from step 3, by 1e-4 at step 30 and 3e-3 at step 60 on an AMD
  // EPYC; in the same layout they agree bitwise, step for step). Compared
  // after a few steps, not after epochs: training amplifies any rounding difference by an
  // amount that depends on the processor's kernels.
  //
  // What it catches: a wrong forward moves the first step's loss, a wrong gradient or optimizer
  // update the next one's, a wrong evaluation path (batch norm's running statistics) the test
  // loss, each by far more than 1e-6.
  static constexpr double kSameArithmetic = 1e-6;  // relative: 8 float32 ulps, the last bits of a threaded reduction
  void expect_same_steps_as_the_cpu(const std::string& name, int steps) {
    const std::string same_kernels =
        "--set optim.impl=\\\"foreach\\\" --set train.memory_format=\\\"contiguous\\\" "
        "--set train.log_interval=1 --set train.max_steps=" +
        std::to_string(steps);
    auto cpu = run_on("cpu", same_kernels);
    ASSERT_EQ(cpu.exit_code, 0) << cpu.out;
    auto emulated = run_on("emulated", same_kernels);
    ASSERT_EQ(emulated.exit_code, 0) << emulated.out;
    const nlohmann::json on_cpu = summary(name, 0), on_emulated = summary(name, 1);
    EXPECT_EQ(on_emulated["device"], "emu:0");
    const std::vector<double> a = step_losses(name, 0), b = step_losses(name, 1);
    ASSERT_EQ(a.size(), static_cast<std::size_t>(steps));
    ASSERT_EQ(b.size(), a.size());
    auto same = [](double x, double y) { return std::abs(x - y) <= kSameArithmetic * std::abs(x); };
    double largest = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      largest = std::max(largest, std::abs(a[i] - b[i]) / std::abs(a[i]));
      EXPECT_TRUE(same(a[i], b[i])) << "step " << i + 1 << ": cpu " << a[i] << ", emulated " << b[i];
    }
    const double test_a = on_cpu["final_test_loss"], test_b = on_emulated["final_test_loss"];
    EXPECT_TRUE(same(test_a, test_b)) << "test loss after " << steps << " steps: cpu " << test_a << ", emulated "
                                      << test_b;
    std::printf("[ %s ] %d steps: largest relative difference of a step's loss %.2g, test loss %.9g against %.9g\n",
                name.c_str(), steps, largest, test_a, test_b);
  }
  fs::path dir_;
};

TEST_F(EmulatedAcceleratorTest, FashionMnistMlpAndConvnetTakeTheCpusSteps) {
  if (!fs::exists(kFashion)) GTEST_SKIP() << "dataset-fashion-mnist not installed";
  for (const std::string model : {"mlp", "convnet"}) {
    write(testing::ExperimentToml(model)
              .set("experiment.seed", 1)
              .set_keys("model", {{"name", model}, {"dropout", 0.0}})
              .set_keys("data", {{"path", testing::fashion_mnist_dir().string()},
                                 {"train_subset", 3000},
                                 {"test_subset", 1000},
                                 {"batch_size", 100}})
              .set("train.epochs", 1));
    expect_same_steps_as_the_cpu(model, 10);
  }
}

// Batch norm in training (batch statistics) and in evaluation (the running statistics the
// emulated device's own kernel copies back): both epoch steps (32 and 8 samples), then the test.
TEST_F(EmulatedAcceleratorTest, ResNet18InCifarFormTakesTheCpusSteps) {
  testing::write_cifar10(dir_ / "cifar", 40, 40);
  write(testing::ExperimentToml("resnet")
            .set("experiment.seed", 2)
            .set_keys("model", {{"name", "resnet18"}, {"stem", "cifar"}})
            .set_keys("data", {{"dataset", "cifar10"}, {"path", "cifar"}, {"batch_size", 32}})
            .set_keys("optim", {{"name", "sgd"}, {"lr", 0.05}, {"momentum", 0.9}})
            .set("train.epochs", 1));
  expect_same_steps_as_the_cpu("resnet", 2);
}

TEST_F(EmulatedAcceleratorTest, OperatorsThatFellBackAreCountedInTheSummaryAndSaidOnce) {
  write(testing::ExperimentToml::synthetic("fb")
            .unset("experiment.seed")
            .set("model.hidden", {16})
            .set("data.synthetic_shape", {1, 4, 4})
            .unset("data.synthetic_classes")
            .set("data.synthetic_train_size", 200)
            .set("data.synthetic_test_size", 100)
            .unset("optim")
            .set("train.epochs", 1));
  auto r = run_on("emulated");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::regex line(R"(warning: emulated: [0-9]+ operators ran on the CPU, [0-9]+ calls \(most: aten::)");
  EXPECT_TRUE(std::regex_search(r.out, line)) << r.out;
  const nlohmann::json fallbacks = summary("fb", 0)["cpu_fallbacks"];
  ASSERT_TRUE(fallbacks.is_object()) << fallbacks.dump();
  std::uint64_t addmm = 0;  // the linear layers' products, in whatever overload the fallback met
  for (const auto& [op, calls] : fallbacks.items())
    if (op.rfind("aten::addmm", 0) == 0 || op.rfind("aten::mm", 0) == 0) addmm += calls.get<std::uint64_t>();
  EXPECT_GE(addmm, 4u) << "4 training steps each run the layers' matrix products: " << fallbacks.dump();
  EXPECT_FALSE(fallbacks.contains("aten::_copy_from")) << "copies are the device's own kernels";
  EXPECT_FALSE(fallbacks.contains("aten::empty.memory_format"));

  auto cpu = run_on("cpu");
  ASSERT_EQ(cpu.exit_code, 0) << cpu.out;
  EXPECT_EQ(cpu.out.find("ran on the CPU"), std::string::npos) << cpu.out;
  EXPECT_TRUE(summary("fb", 1)["cpu_fallbacks"].empty());
}

TEST_F(EmulatedAcceleratorTest, AutocastPrecisionsItLacksAreRefusedAtValidation) {
  // Inline on purpose: the message names a position (exp.toml:8:13) in this text.
  write(
      "[experiment]\nname = \"p\"\n[model]\nname = \"mlp\"\n[data]\ndataset = \"synthetic\"\n[train]\nprecision = "
      "\"bf16\"\n");
  auto r = run_on("emulated");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("exp.toml:8:13: train.precision = \"bf16\" but backend 'emulated' (emu) has no bf16 autocast "
                       "kernels (it has: none); use \"fp32\""),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "runs")) << "refused before any run folder";
}

// Adam on 2048 synthetic 28x28 samples, the batch chosen for the device's memory.
const testing::ExperimentToml kMlp = testing::ExperimentToml::synthetic("mem")
                                         .set("experiment.seed", 4)
                                         .set("model.hidden", {256, 256})
                                         .set("data.synthetic_shape", {1, 28, 28})
                                         .unset("data.synthetic_classes")
                                         .set("data.synthetic_train_size", 2048)
                                         .set("data.synthetic_test_size", 256)
                                         .set("data.batch_size", "auto")
                                         .set("data.max_batch_size", 1024)
                                         .unset("optim")
                                         .set("train.epochs", 1);

TEST_F(EmulatedAcceleratorTest, AutomaticBatchSizeFollowsTheAllocatorsCapacity) {
  write(kMlp);
  auto roomy = run_on("emulated", "", "PLUGTRAIN_EMU_MEMORY=1G");
  ASSERT_EQ(roomy.exit_code, 0) << roomy.out;
  auto tight = run_on("emulated", "", "PLUGTRAIN_EMU_MEMORY=8M");
  ASSERT_EQ(tight.exit_code, 0) << tight.out;
  const std::int64_t large = summary("mem", 0)["step_batch"], small = summary("mem", 1)["step_batch"];
  EXPECT_EQ(large, 1024) << roomy.out;
  EXPECT_LT(small, large) << tight.out;
  EXPECT_GE(small, 8) << tight.out;
}

TEST_F(EmulatedAcceleratorTest, OutOfMemoryFromItsAllocatorHalvesTheBatch) {
  write(kMlp);
  auto r = run_on("emulated", "--set data.batch_size=2048", "PLUGTRAIN_EMU_MEMORY=12M");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("out of memory at step 1 (epoch 1) with 2048 samples per step"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("emu:0 out of memory"), std::string::npos) << r.out;
  const nlohmann::json s = summary("mem", 0);
  EXPECT_LT(s["step_batch"].get<int>(), 2048);
  EXPECT_EQ(s["epochs"][0]["samples"], 2048) << "no sample lost or trained twice";
}

TEST_F(EmulatedAcceleratorTest, ACheckpointMovesToTheCpuAndBack) {
  write(kMlp);
  const std::string fixed = "--set data.batch_size=64 ";
  ASSERT_EQ(run_on("emulated", fixed).exit_code, 0);
  auto on_cpu = run_on("cpu", fixed + "--resume last --set train.epochs=2");
  ASSERT_EQ(on_cpu.exit_code, 0) << on_cpu.out;
  EXPECT_EQ(summary("mem", 0)["resumed_from"]["epochs_done"], 1) << on_cpu.out;
  EXPECT_EQ(summary("mem", 0)["device"], "cpu") << on_cpu.out;
  auto back = run_on("emulated", fixed + "--resume last --set train.epochs=3");
  ASSERT_EQ(back.exit_code, 0) << back.out;
  const nlohmann::json s = summary("mem", 0);
  ASSERT_EQ(s["epochs"].size(), 3u);
  EXPECT_EQ(s["device"], "emu:0");
  EXPECT_LT(s["epochs"][2]["train_loss"].get<double>(), s["epochs"][0]["train_loss"].get<double>());
#ifdef PLUGTRAIN_PYTHON
  // Its export is a plain CPU state_dict that Python's torch.load reads (weights_only, the default).
  const fs::path checkpoint = dir_ / "runs" / "mem" / "version_0" / "checkpoints" / "last.ckpt";
  auto exported = plugtrain("export " + shell_quote(checkpoint.string()) + " weights.pt");
  ASSERT_EQ(exported.exit_code, 0) << exported.out;
  auto py = run_process("cd " + shell_quote(dir_.string()) + " && " + PLUGTRAIN_PYTHON +
                        " -c \"import torch; s = torch.load('weights.pt'); "
                        "print(sorted((k, tuple(v.shape), str(v.device)) for k, v in s.items())[0])\"");
  ASSERT_EQ(py.exit_code, 0) << py.out;
  EXPECT_NE(py.out.find("('fc1.bias', (256,), 'cpu')"), std::string::npos) << py.out;
#endif
}

// A second copy of the plugin under another device name ("emutwo", tests/test_plugins), first on the
// path: it takes PrivateUse1, and the emulated plugin after it is refused, naming both.
TEST_F(EmulatedAcceleratorTest, TwoPluginsThatBothWantPrivateUse1GiveOneErrorNamingBoth) {
  write(kMlp);
  const nlohmann::json listed = json_of("plugins" + testing::faults::test_plugin("second_privateuse1"));
  const nlohmann::json* second = entry_named(listed.at("plugins"), "name", "emulated2");
  ASSERT_NE(second, nullptr) << listed.dump(2);
  EXPECT_EQ(second->at("status"), "usable");
  EXPECT_EQ(second->at("version"), "1.0.0");
  const nlohmann::json* first = entry_named(listed.at("plugins"), "name", "emulated");
  ASSERT_NE(first, nullptr) << listed.dump(2);
  EXPECT_EQ(first->at("status"), "refused");
  EXPECT_THAT(first->at("reason").get<std::string>(),
              AllOf(StartsWith("plugin 'emulated': init: PrivateUse1 is already registered as 'emutwo'"),
                    HasSubstr("(plugin 'emulated2' registered PrivateUse1 as 'emutwo' first)")));
  auto run = plugtrain("run exp.toml --set backend.name=\\\"emulated\\\"" +
                       testing::faults::test_plugin("second_privateuse1"));
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("plugin 'emulated2' registered PrivateUse1"), std::string::npos) << run.out;
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 1) << "one line: " << run.out;
  auto other = plugtrain("run exp.toml --set backend.name=\\\"emulated2\\\" --set data.batch_size=64" +
                         testing::faults::test_plugin("second_privateuse1"));
  ASSERT_EQ(other.exit_code, 0) << other.out;
  EXPECT_NE(other.out.find("on emutwo:0"), std::string::npos) << other.out;
}

TEST_F(EmulatedAcceleratorTest, DoctorBenchAndFastestSelectionSeeIt) {
  write(kMlp);
  const nlohmann::json doctor = json_of("doctor");
  EXPECT_EQ(doctor.at("ok"), true) << doctor.dump(2);
  const nlohmann::json* smoke = entry_named(doctor.at("smoke_tests"), "backend", "emulated");
  ASSERT_NE(smoke, nullptr) << doctor.dump(2);
  EXPECT_EQ(smoke->at("what"), "1 device");
  EXPECT_EQ(smoke->at("passed"), true);
  EXPECT_FALSE(smoke->at("cpu_fallbacks").empty()) << "an operator the device lacks ran on the CPU, counted";
  auto bench = plugtrain("bench exp.toml --backends cpu,emulated --steps 3 --warmup 1 --set data.batch_size=64");
  ASSERT_EQ(bench.exit_code, 0) << bench.out;
  EXPECT_TRUE(std::regex_search(bench.out, std::regex("\nemulated +emu:0 +64 "))) << bench.out;
  EXPECT_NE(bench.out.find("cpu fallback: emulated, batch 64:"), std::string::npos) << bench.out;
  // --no-cache: measured now, not read from an earlier run on this machine.
  auto fastest = plugtrain("run exp.toml --no-cache --set backend.select=\\\"fastest\\\" --set data.batch_size=64");
  ASSERT_EQ(fastest.exit_code, 0) << fastest.out;
  EXPECT_TRUE(std::regex_search(fastest.out, std::regex("backend: measured emulated: [0-9]+ samples/s")))
      << "fastest selection measured it too\n"
      << fastest.out;
  EXPECT_TRUE(std::regex_search(fastest.out, std::regex("backend: chose [a-z]+ \\(fastest of [a-z, ]*emulated")))
      << fastest.out;
}

}  // namespace emulated_accelerator_test
}  // namespace plugtrain
