// Activation checkpointing (train.activation_checkpointing = "blocks") as a user runs it: the same
// losses, bit for bit, with dropout on, in single, ddp and fsdp runs, and less memory; and the
// keys of units and sharding refused in one line where they cannot apply.
// ctest-label: e2e
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/experiment_folder.h"
#include "support/experiment_toml.h"
#include "support/jargon_experiment.h"
#include "support/metrics_csv.h"
#include "support/run_folder.h"
#include "support/run_process.h"

namespace plugtrain {
namespace activation_checkpointing_test {

namespace fs = std::filesystem;
using testing::ProcessResult;

// Eight blocks, dropout on (so the recomputation must draw the same numbers as the first pass).
const std::string kExperiment =
    testing::jargon_gpt("gpt")
        .set("experiment.seed", 3)
        .set_keys("model", {{"layers", 8}, {"heads", 4}, {"width", 128}, {"dropout", 0.1}})
        .set_keys("data", {{"batch_size", 32}, {"test_batch_size", 64}})
        .set_keys("dataset", {{"context", 128}, {"vocabulary", "char"}, {"val_fraction", 0.01}})
        .set_keys("train", {{"epochs", 1}, {"steps_per_epoch", 3}, {"log_interval", 1}, {"threads", 1}})
        .text();

class ActivationCheckpointingTest : public testing::ExperimentFolderTest {
 protected:
  ActivationCheckpointingTest() : ExperimentFolderTest("checkpointing", kExperiment) {}

  fs::path train(const std::string& more) {
    const ProcessResult r = plugtrain("run exp.toml " + more);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return testing::run_folder_in_log(r.out, dir_);
  }
  static std::vector<std::string> losses(const fs::path& run) { return testing::step_loss_texts(run); }
  static nlohmann::json summary(const fs::path& run) { return testing::summary_of(run); }
};

const std::string kBlocks = "--set train.activation_checkpointing='\"blocks\"' ";

// The same arithmetic in the same order: the recomputed forward sees the weights, the random
// state and the autocast it first ran with, so each loss is the same to the last digit.
//
// Memory, derived: a block of this GPT keeps for backward at least 12 tensors of B x T x C
// floats (ln_1's output, the three of qkv, attention's output and its copy, c_proj's, ln_2's,
// c_fc's four, GELU's four, ...: nearer 17), B x T x C = 32 x 128 x 128 x 4 bytes = 2 MiB. Eight
// blocks keep at least 8 x 12 x 2 = 192 MiB; checkpointed they keep 8 inputs (16 MiB) and
// recompute one block at a time (at most 17 x 2 = 34 MiB more). So the peak falls by at least
// 192 - 16 - 34 = 142 MiB, of which half is asked (the process's peak also counts the heap's
// rounding and what the allocator keeps).
TEST_F(ActivationCheckpointingTest, SameLossesBitForBitWithLessMemory) {
  const fs::path plain = train("");
  const fs::path checkpointed = train(kBlocks);
  ASSERT_EQ(losses(plain).size(), 3u);
  EXPECT_EQ(losses(checkpointed), losses(plain));
  const std::int64_t peak_plain = summary(plain)["epochs"][0]["memory"]["peak_bytes"];
  const std::int64_t peak_checkpointed = summary(checkpointed)["epochs"][0]["memory"]["peak_bytes"];
  EXPECT_LE(peak_checkpointed, peak_plain - 71 * (std::int64_t(1) << 20)) << peak_plain << " -> " << peak_checkpointed;
}

TEST_F(ActivationCheckpointingTest, DdpAndFsdpRunsCheckpointToTheSameLosses) {
  const std::string small = "--set model.layers=2 --set backend.devices=2 ";
  for (const char* strategy : {"ddp", "fsdp"}) {
    const std::string with = small + "--set backend.strategy='\"" + strategy + "\"' ";
    EXPECT_EQ(losses(train(with + kBlocks)), losses(train(with))) << strategy;
  }
}

// One line each, before any training, naming the key.
TEST_F(ActivationCheckpointingTest, KeysThatCannotApplyAreRefusedInOneLine) {
  struct Case {
    std::string set, key, says;
  };
  const std::vector<Case> cases = {
      {"--set distributed.shard='\"gradients\"'", "distributed.shard", "backend.strategy = \"fsdp\""},
      {"--set backend.strategy='\"fsdp\"' --set backend.devices=2 --set train.graphs=true", "train.graphs",
       "recorded graph"},
      {"--set backend.strategy='\"fsdp\"' --set backend.devices=2 --set train.ema_decay=0.99", "train.ema_decay",
       "use ddp"},
      {"--set backend.strategy='\"fsdp\"' --set backend.devices=2 --set train.precision='\"fp16\"'", "train.precision",
       "bf16"},
  };
  for (const Case& c : cases) {
    const ProcessResult r = plugtrain("run exp.toml " + c.set);
    EXPECT_EQ(r.exit_code, 2) << c.set << "\n" << r.out;
    EXPECT_NE(r.out.find(c.key), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("epoch 1"), std::string::npos) << "nothing trained: " << r.out;
    EXPECT_FALSE(fs::exists(dir_ / "runs" / "gpt" / "version_0" / "summary.json")) << c.set;
  }
  // A model that declares no units has nothing to checkpoint.
  write_experiment(testing::ExperimentToml("mlp")
                       .set_keys("model", {{"name", "mlp"}, {"hidden", {8}}})
                       .set_keys("data", {{"dataset", "synthetic"}, {"synthetic_shape", {1, 4, 4}}, {"batch_size", 16}})
                       .set_keys("train", {{"epochs", 1}, {"activation_checkpointing", "blocks"}})
                       .text());
  const ProcessResult mlp = plugtrain("run exp.toml");
  EXPECT_EQ(mlp.exit_code, 2) << mlp.out;
  EXPECT_NE(mlp.out.find("train.activation_checkpointing"), std::string::npos) << mlp.out;
  EXPECT_NE(mlp.out.find("declares no units"), std::string::npos) << mlp.out;
  EXPECT_FALSE(fs::exists(dir_ / "runs" / "mlp" / "version_0" / "summary.json"));
}

}  // namespace activation_checkpointing_test
}  // namespace plugtrain
