// The batch a run trains on when memory decides it, as a user sees it: data.batch_size = "auto"
// on a device whose memory the test sets (test plugin "limited": a counting allocator that
// raises LibTorch's out-of-memory error past its limit), and the halving that follows an
// out-of-memory error during training (test model "faultnet", which runs out of memory at a
// chosen step).
// ctest-label: e2e
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <regex>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/experiment_folder.h"
#include "support/experiment_toml.h"
#include "support/faults.h"
#include "support/run_folder.h"
#include "support/run_process.h"

namespace plugtrain {
namespace batch_size_test {

using ::testing::HasSubstr;
using testing::run_process;
using testing::shell_quote;
namespace fs = std::filesystem;

class BatchSizeTest : public testing::ExperimentFolderTest {
 protected:
  BatchSizeTest() : ExperimentFolderTest("batch", "") {}

  void write(const std::string& text) { write_experiment(text); }
  // memory_limit > 0: the "limited" backend has that many bytes.
  testing::ProcessResult run(const std::string& args, std::uint64_t memory_limit = 0) {
    // The experiment names the backend: only the limited device's plugin path is taken here.
    const std::string env = memory_limit ? testing::faults::device_memory(memory_limit).env : "";
    return run_process(env + "sh -c " +
                       shell_quote(command("run exp.toml" + testing::faults::test_plugin("limited_memory") +
                                           testing::faults::test_plugin("fault_models") + " " + args)));
  }
  fs::path version(int n) const { return testing::run_folder(dir_, "batch", n); }
  nlohmann::json summary(int n) const { return testing::run_summary(dir_, "batch", n); }
  // The batch per device that run `n` trained with ("auto": the one the search chose).
  std::int64_t chosen_batch(int n) const { return summary(n)["plan"]["batch"]["per_device"].get<std::int64_t>(); }
};

using ModelKey = std::pair<std::string, testing::TomlValue>;

// Adam on 2000 synthetic 16x16 samples for one epoch, on `backend`, with `model` (the
// [model] table's keys); a test adds its batch keys.
testing::ExperimentToml experiment(const std::string& backend, const std::vector<ModelKey>& model) {
  testing::ExperimentToml e = testing::ExperimentToml::synthetic("batch")
                                  .set("experiment.seed", 3)
                                  .set("backend.name", backend)
                                  .unset("model")
                                  .set("data.synthetic_shape", {1, 16, 16})
                                  .unset("data.synthetic_classes")
                                  .set("data.synthetic_train_size", 2000)
                                  .set("data.test_batch_size", 100)
                                  .unset("data.batch_size")
                                  .unset("optim")
                                  .set("optim.name", "adam")
                                  .set("train.epochs", 1);
  for (const auto& [key, value] : model) e.set("model." + key, value);
  return e;
}

bool is_power_of_two(std::int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// The model's memory on the limited device, measured by an "auto" search with room for every
// batch: the peak of the 8-sample trial and the bytes each further sample adds.
struct MemoryModel {
  double base = 0, per_sample = 0;
  // The limit at which the search's budget (90 %) holds `samples` and no more.
  std::uint64_t limit_for(double samples) const { return std::uint64_t((base + per_sample * samples) / 0.9); }
};

double mib(const std::string& text) { return std::stod(text) * 1024 * 1024; }

const std::vector<ModelKey> kMlp = {{"name", "mlp"}, {"hidden", {512, 512}}};

TEST_F(BatchSizeTest, AutoChoosesTheLargestPowerOfTwoThatFitsTheDevicesMemory) {
  write(experiment("limited", kMlp).set("data.batch_size", "auto").text());
  auto roomy = run("", 256ull << 20);
  ASSERT_EQ(roomy.exit_code, 0) << roomy.out;
  EXPECT_EQ(chosen_batch(0), 1024) << "room for all: the largest power of two of 2000 samples: " << roomy.out;
  EXPECT_NE(roomy.out.find("batch: auto: memory budget 230.4 MiB on limited:0 (90% of free + used by this process)"),
            std::string::npos)
      << roomy.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      roomy.out, m, std::regex(R"(tried 8 fits \(peak ([0-9.]+) MiB\).* 1024 fits \(peak ([0-9.]+) MiB\))")))
      << roomy.out;
  MemoryModel memory{mib(m[1]), (mib(m[2]) - mib(m[1])) / (1024 - 8)};
  ASSERT_GT(memory.per_sample, 0) << roomy.out;

  // Room for about 384 samples by that estimate (which overestimates: memory per sample falls
  // as batches grow): the limit decides, not the cap, and the next power of two did not fit.
  const std::uint64_t limit = memory.limit_for(384);
  auto r = run("", limit);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::int64_t chosen = chosen_batch(1);
  ASSERT_TRUE(is_power_of_two(chosen)) << r.out;
  EXPECT_LT(chosen, 1024) << r.out;
  EXPECT_NE(r.out.find(" " + std::to_string(chosen) + " fits (peak "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" " + std::to_string(2 * chosen) + " does not fit ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(the largest power of two whose trial steps fit)"), std::string::npos) << r.out;
  EXPECT_TRUE(summary(1)["batch_halvings"].empty()) << "the chosen batch trains: " << r.out;
  // The run folder records what was chosen; a resume continues with it instead of searching.
  EXPECT_NE(testing::slurp(version(1) / "experiment.toml").find("batch_size = " + std::to_string(chosen)),
            std::string::npos);
  EXPECT_EQ(summary(1)["step_batch"], chosen);

  auto resumed = run("--resume last --set train.epochs=2", limit);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  EXPECT_NE(resumed.out.find("batch: auto: " + std::to_string(chosen) + " per device, as the run being resumed chose"),
            std::string::npos)
      << resumed.out;
  EXPECT_EQ(resumed.out.find("tried"), std::string::npos) << "no search on resume: " << resumed.out;
}

// faultnet runs out of memory above 100 samples: the guess (the cap, 1024) fails and a binary
// search between the last that fit (32) and it finds 64.
TEST_F(BatchSizeTest, AutoNarrowsDownWhenTheGuessRunsOutOfMemory) {
  write(experiment("cpu", {{"name", "faultnet"}, {"max_batch", 100}}).set("data.batch_size", "auto").text());
  auto r = run("");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(chosen_batch(0), 64) << r.out;
  EXPECT_NE(r.out.find(" 128 does not fit (out of memory (faultnet: out of memory"), std::string::npos) << r.out;
  EXPECT_TRUE(summary(0)["batch_halvings"].empty()) << "the chosen batch trains: " << r.out;
}

TEST_F(BatchSizeTest, AutoOnTheCpuStopsAtMaxBatchSizeAndTheLearningRateFollows) {
  write(experiment("cpu", {{"name", "mlp"}, {"hidden", {32}}})
            .set("data.batch_size", "auto")
            .set("data.max_batch_size", 300)
            .set("optim.lr", 0.001)
            .set("optim.lr_scaling", "linear")
            .set("optim.lr_batch_size", 64)
            .text());
  auto r = run("");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(chosen_batch(0), 256) << r.out;
  EXPECT_NE(r.out.find("(the largest power of two up to data.max_batch_size 300)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lr 0.001 x 4 (linear scaling) = 0.004"), std::string::npos) << r.out;
}

// ddp started by plugtrain's own launcher: the launcher searches once, every rank trains on it.
TEST_F(BatchSizeTest, AutoWithDdpSearchesOnceAndEveryRankUsesTheSize) {
  write(experiment("cpu", {{"name", "mlp"}, {"hidden", {32}}})
            .set("data.batch_size", "auto")
            .set("data.max_batch_size", 64)
            .text());
  auto r = run("--set backend.devices=2");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(chosen_batch(0), 64) << r.out;
  std::size_t searches = 0;
  for (std::size_t at = r.out.find("batch: auto: tried"); at != std::string::npos;
       at = r.out.find("batch: auto: tried", at + 1))
    ++searches;
  EXPECT_EQ(searches, 1u) << "the workers do not search again: " << r.out;
  const nlohmann::json batch = summary(0)["plan"]["batch"];
  EXPECT_EQ(batch["per_device"], 64) << batch;
  EXPECT_EQ(batch["devices"], 2) << batch;
  EXPECT_EQ(batch["global"], 128) << batch;
  EXPECT_NE(testing::slurp(version(0) / "experiment.toml").find("batch_size = 64"), std::string::npos);
}

TEST_F(BatchSizeTest, AutoWithLrScalingNeedsTheReferenceBatch) {
  write(experiment("cpu", {{"name", "mlp"}}).set("data.batch_size", "auto").set("optim.lr_scaling", "sqrt").text());
  auto r = run("");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("exp.toml:"), std::string::npos) << "names the place: " << r.out;
  EXPECT_NE(r.out.find("needs optim.lr_batch_size"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "runs")) << "nothing is written before the experiment is valid";

  write(experiment("cpu", {{"name", "mlp"}}).set("data.batch_size", "many").text());
  r = run("");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("data.batch_size"), std::string::npos) << r.out;
}

// faultnet runs out of memory above 32 samples from training step 5 on: the step is retried
// with 64, which also fails, then with 32; every later batch of 128 trains as four steps.
TEST_F(BatchSizeTest, OutOfMemoryHalvesTheBatchAndTrainsEverySampleOnce) {
  write(experiment("cpu", {{"name", "faultnet"}, {"max_batch", 32}, {"from_call", 5}})
            .set("data.batch_size", 128)
            .set("optim.lr", 0.002)
            .set("optim.lr_scaling", "linear")
            .text());
  auto r = run("--set train.epochs=2");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json s = summary(0);
  ASSERT_EQ(s["batch_halvings"].size(), 2u) << s["batch_halvings"].dump();
  const nlohmann::json first = s["batch_halvings"][0], second = s["batch_halvings"][1];
  EXPECT_EQ(first["epoch"], 1) << first.dump();
  EXPECT_EQ(first["step"], 5) << first.dump();
  EXPECT_EQ(first["to"], 64) << first.dump();
  EXPECT_DOUBLE_EQ(first["lr_before"].get<double>(), 0.002) << "optim.lr_scaling follows the batch";
  EXPECT_DOUBLE_EQ(first["lr_after"].get<double>(), 0.001);
  EXPECT_EQ(second["from"], 64) << second.dump();
  EXPECT_DOUBLE_EQ(second["lr_after"].get<double>(), 0.0005);
  ASSERT_EQ(s["epochs"].size(), 2u);
  EXPECT_EQ(s["epochs"][0]["samples"], 2000) << "no sample lost or trained twice";
  EXPECT_EQ(s["epochs"][1]["samples"], 2000);
  // Epoch 1: 4 steps of 128, then 11 batches of 128 as 4 steps each and the last 80 as 32+32+16;
  // epoch 2: 15 batches as 4 steps each and 80 as 3.
  EXPECT_EQ(s["steps"], 4 + 44 + 3 + 60 + 3);
  EXPECT_EQ(s["step_batch"], 32);
  EXPECT_EQ(first["from"], 128);
  EXPECT_EQ(second["to"], 32);
  EXPECT_DOUBLE_EQ(s["epochs"][1]["lr"].get<double>(), 0.0005);

  // The checkpoint keeps the smaller batch: a resumed run does not run out of memory again.
  auto resumed = run("--resume last --set train.epochs=3");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  EXPECT_EQ(resumed.out.find("out of memory"), std::string::npos) << resumed.out;
  EXPECT_EQ(summary(0)["step_batch"], 32);
}

TEST_F(BatchSizeTest, OutOfMemoryBelowMinBatchSizeStopsAndSaysWhatWasTried) {
  write(experiment("cpu", {{"name", "faultnet"}, {"max_batch", 10}})
            .set("data.batch_size", 128)
            .set("data.min_batch_size", 32)
            .text());
  auto r = run("");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("out of memory at step 1 (epoch 1) with 32 samples per step (tried 128, 64, 32); 16 would be "
                       "below data.min_batch_size = 32"),
            std::string::npos)
      << r.out;
}

// The limited device's own allocator runs out: the same recovery, from a real allocation.
TEST_F(BatchSizeTest, OutOfMemoryFromTheAllocatorIsRecoveredToo) {
  write(experiment("limited", kMlp).set("data.batch_size", "auto").text());
  auto roomy = run("", 256ull << 20);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      roomy.out, m, std::regex(R"(tried 8 fits \(peak ([0-9.]+) MiB\).* 1024 fits \(peak ([0-9.]+) MiB\))")))
      << roomy.out;
  const MemoryModel memory{mib(m[1]), (mib(m[2]) - mib(m[1])) / (1024 - 8)};

  // Memory where "auto" chooses less than 1024: a run told to use 1024 runs out in its first
  // step and goes on with a smaller batch.
  write(experiment("limited", kMlp).set("data.batch_size", 1024).text());
  auto r = run("", memory.limit_for(384));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json s = summary(1);
  ASSERT_FALSE(s["batch_halvings"].empty()) << r.out;
  const nlohmann::json halving = s["batch_halvings"][0];
  EXPECT_EQ(halving["epoch"], 1) << halving.dump();
  // (The first step may still fit: the optimizer's state is made after it.)
  EXPECT_LE(halving["step"].get<int>(), 2) << halving.dump();
  EXPECT_EQ(halving["from"], 1024) << halving.dump();
  EXPECT_THAT(halving["error"].get<std::string>(), HasSubstr("limited test device: out of memory"));
  EXPECT_LT(s["step_batch"].get<std::int64_t>(), 1024) << r.out;
  EXPECT_EQ(s["epochs"][0]["samples"], 2000);
}

}  // namespace batch_size_test
}  // namespace plugtrain
