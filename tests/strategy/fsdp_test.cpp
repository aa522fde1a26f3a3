// Sharded training (backend.strategy = "fsdp") as a user runs it: nanoGPT's GPT on the real
// Jargon File over c10d Gloo, at each shard level, against ddp at the same world size; the
// state each rank keeps, read from summary.json; checkpoints that resume at other world sizes
// and under ddp; the emulated vendor device through its own collective.
// ctest-label: slow
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/emulated_runs.h"
#include "support/experiment_folder.h"
#include "support/experiment_toml.h"
#include "support/jargon_experiment.h"
#include "support/metrics_csv.h"
#include "support/run_folder.h"
#include "support/run_process.h"

namespace plugtrain {
namespace fsdp_test {

namespace fs = std::filesystem;
using testing::ProcessResult;

// No dropout (each rank would draw its own), no gradient clipping unless a test sets it. The
// global batch is fixed, so a checkpoint resumes at 1, 2 or 4 processes.
const testing::ExperimentToml kExperiment =
    testing::jargon_gpt("gpt")
        .set("experiment.seed", 7)
        .set_keys("model", {{"layers", 4}, {"heads", 2}, {"width", 64}, {"dropout", 0.0}})
        .set_keys("data", {{"global_batch_size", 16}, {"test_batch_size", 64}})
        .set_keys("dataset", {{"context", 32}, {"vocabulary", "char"}, {"val_fraction", 0.02}})
        .set_keys("optim", {{"name", "adamw"}, {"lr", 1e-3}, {"weight_decay", 0.1}, {"decay", "matrices"}})
        .set_keys("train", {{"epochs", 2}, {"steps_per_epoch", 10}, {"log_interval", 1}});

class FsdpTest : public testing::ExperimentFolderTest {
 protected:
  FsdpTest() : ExperimentFolderTest("fsdp", kExperiment.text()) {}

  // `plugtrain run exp.toml` on `devices` processes with `strategy`; the run's folder.
  fs::path train(int devices, const std::string& strategy, const std::string& more = "") {
    const ProcessResult r = run(devices, strategy, more);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return testing::run_folder_in_log(r.out, dir_);
  }
  ProcessResult run(int devices, const std::string& strategy, const std::string& more) {
    const std::string args = "run exp.toml --set backend.devices=" + std::to_string(devices) +
                             " --set backend.strategy='\"" + strategy + "\"' " + more;
    return plugtrain(args);
  }
  static std::vector<std::string> losses(const fs::path& run) { return testing::step_loss_texts(run); }
  static nlohmann::json summary(const fs::path& run) { return testing::summary_of(run); }
};

// Two ranks: every element of a gradient is the sum of two numbers, which is the same whichever
// rank adds first (addition is commutative in IEEE arithmetic), and both strategies divide by the
// world size before summing. The forward pass sees the same weights, bit for bit, and AdamW steps
// each element alike whether it sits in a parameter or in a flat shard. So every logged loss is
// the same to the last printed digit.
TEST_F(FsdpTest, EachShardLevelLogsDdpsLossesAtTwoProcesses) {
  const std::vector<std::string> ddp = losses(train(2, "ddp"));
  ASSERT_EQ(ddp.size(), 20u);
  for (const char* level : {"optimizer", "gradients", "full"}) {
    const fs::path run = train(2, "fsdp", std::string("--set distributed.shard='\"") + level + "\"'");
    EXPECT_EQ(losses(run), ddp) << level;
    EXPECT_EQ(summary(run)["strategy"], "fsdp");
    EXPECT_EQ(summary(run)["sharding"]["shard"], level);
    EXPECT_EQ(summary(run)["sharding"]["units"], 4);  // the GPT's blocks
  }
}

// The Jargon File's own val split, 5,058 windows, over 4 ranks: ranks 0 and 1 evaluate 1,265
// windows, ranks 2 and 3 1,264; in batches of 1,264, two batches against one. Under fsdp every
// forward pass gathers (a collective): ranks 2 and 3 make the pass they lack as gathers alone,
// so the ranks meet in every collective (else they would wait for each other until the timeout)
// and the figures are ddp's, within the reduction order's rounding (see below).
TEST_F(FsdpTest, AnUnevenEvaluationShardStillMeetsItsPeers) {
  write_experiment(testing::ExperimentToml(kExperiment).unset("dataset.val_fraction").text());
  const std::string uneven = "--set data.test_batch_size=1264 --set distributed.timeout=30 --set train.epochs=1 ";
  const ProcessResult r = run(4, "fsdp", uneven);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  ASSERT_NE(r.out.find("5058 val samples"), std::string::npos) << "the split this test counts on: " << r.out;
  const double ddp = summary(train(4, "ddp", uneven))["final_test_loss"];
  const double fsdp = summary(testing::run_folder_in_log(r.out, dir_))["final_test_loss"];
  EXPECT_NEAR(fsdp, ddp, 10 * 8 * std::ldexp(1.0, -24) * ddp);
}

// Every optimizer steps the flat shards as it steps the parameters, in each of its forms, and an
// accumulated step sums the gradients once, in its last micro-batch: ddp's losses, bit for bit.
TEST_F(FsdpTest, EveryOptimizerAndAccumulationMatchDdpAtTwoProcesses) {
  const std::vector<std::string> recipes = {
      "--set optim.name='\"sgd\"' --set optim.momentum=0.9 --set optim.lr=0.1",
      "--set optim.name='\"adam\"' --set optim.impl='\"loop\"'",
      "--set optim.impl='\"foreach\"'",
      "--set optim.name='\"rmsprop\"' --set optim.momentum=0.5",
      "--set optim.name='\"lion\"' --set optim.lr=1e-4",
      "--set train.accumulate_steps=2",
  };
  for (const std::string& recipe : recipes) {
    const std::string short_run = "--set train.epochs=1 --set train.steps_per_epoch=6 " + recipe;
    const std::vector<std::string> ddp = losses(train(2, "ddp", short_run));
    ASSERT_FALSE(ddp.empty()) << recipe;
    EXPECT_EQ(losses(train(2, "fsdp", short_run)), ddp) << recipe;
  }
}

// Four ranks sum each gradient element's four terms in another order than ddp's buckets do:
// each sum may differ by one rounding, u = 2^-24 relative to the sum of the magnitudes. AdamW
// normalises the update, so such a difference moves a weight by about lr * u * c, where c (the
// magnitudes over the sum) stays below 8 for these gradients; over the 20 steps the loss can
// drift by 20 * 8 * u = 1e-5 relative at most. Clipping is on: fsdp's norm is summed over the
// shards of every rank (a rank's own shards alone would clip differently, far beyond that).
TEST_F(FsdpTest, FourProcessesFollowDdpWithinTheReductionOrder) {
  const std::string clip = "--set train.grad_clip=0.5 ";
  const std::vector<std::string> ddp = losses(train(4, "ddp", clip));
  const fs::path full = train(4, "fsdp", clip);
  const std::vector<std::string> fsdp = losses(full);
  ASSERT_EQ(fsdp.size(), ddp.size());
  const double tolerance = 20 * 8 * std::ldexp(1.0, -24);
  for (std::size_t i = 0; i < ddp.size(); ++i)
    EXPECT_NEAR(std::stod(fsdp[i]), std::stod(ddp[i]), tolerance * std::stod(ddp[i])) << "step " << i + 1;
}

// Per rank, "full" keeps a 1/N shard of the parameters, gradients and AdamW's two moments (each
// shard padded to a multiple of N elements: at most N - 1 elements more per flat parameter, two
// per unit), and at most the root and the two largest units gathered at once (the unit running
// and the next one travelling).
TEST_F(FsdpTest, FullShardingKeepsOneNthOfDdpsStatePlusTheGatheredUnits) {
  for (int n : {2, 4}) {
    const nlohmann::json ddp = summary(train(n, "ddp"));
    const nlohmann::json full = summary(train(n, "fsdp"));
    const std::int64_t ddp_bytes = ddp["state_bytes"], full_bytes = full["state_bytes"];
    const nlohmann::json& units = full["sharding"];
    const std::int64_t largest = units["largest_unit_bytes"], root = units["root_bytes"];
    const std::int64_t padding = 4 * (2 * (units["units"].get<std::int64_t>() + 1)) * (n - 1) * 4;
    EXPECT_LE(full_bytes, ddp_bytes / n + padding + 2 * largest) << n << " processes";
    EXPECT_LT(full_bytes, ddp_bytes) << n;
    EXPECT_LE(units["peak_gathered_bytes"].get<std::int64_t>(), root + 2 * largest) << n;
    EXPECT_GT(units["peak_gathered_bytes"].get<std::int64_t>(), 0) << n;
  }
}

// bf16 parameters (FSDP2's MixedPrecisionPolicy(param_dtype=bfloat16, reduce_dtype=float32)):
// gathered in half the bytes, the shards and the optimizer's state float32. Each weight and each
// activation is rounded to bf16's 8 bits (2^-9 relative); the loss, a log-softmax of logits of a
// few units, moves by a few such roundings: within 4 x 2^-9 < 1e-2 relative of float32's run, while
// a run whose steps were lost would stay near its first loss (5.0, against 3.8 after 20 steps).
// A checkpoint holds the float32 weights: resumed, the run goes on exactly as if uninterrupted.
TEST_F(FsdpTest, Bf16ParametersGatherHalfTheBytesAndCheckpointFloat32Weights) {
  const std::string bf16 = "--set distributed.param_dtype='\"bf16\"' ";
  const fs::path fp32_run = train(2, "fsdp"), bf16_run = train(2, "fsdp", bf16);
  const std::vector<std::string> fp32 = losses(fp32_run), whole = losses(bf16_run);
  ASSERT_EQ(whole.size(), fp32.size());
  for (std::size_t i = 0; i < fp32.size(); ++i)
    EXPECT_NEAR(std::stod(whole[i]), std::stod(fp32[i]), 1e-2 * std::stod(fp32[i])) << "step " << i + 1;
  EXPECT_EQ(2 * summary(bf16_run)["sharding"]["peak_gathered_bytes"].get<std::int64_t>(),
            summary(fp32_run)["sharding"]["peak_gathered_bytes"].get<std::int64_t>());
  const fs::path first = train(2, "fsdp", bf16 + "--set train.epochs=1");
  fs::copy_file(first / "checkpoints" / "last.ckpt", dir_ / "resume.ckpt");
  const std::vector<std::string> resumed = losses(train(2, "fsdp", bf16 + "--resume resume.ckpt"));
  EXPECT_EQ(resumed, std::vector<std::string>(whole.begin() + 10, whole.end()));
}

// A checkpoint of 4 fsdp processes holds the model whole and each parameter's optimizer state,
// as ddp's does: resumed on 2 processes with fsdp and with ddp, the two continue with the same
// losses, bit for bit (two ranks: see above); and on one process it trains on.
TEST_F(FsdpTest, AFourProcessCheckpointResumesOnTwoProcessesAndOne) {
  const fs::path first = train(4, "fsdp", "--set train.epochs=1");
  fs::copy_file(first / "checkpoints" / "last.ckpt", dir_ / "four.ckpt");
  auto resume = [&](int devices, const std::string& strategy) {
    fs::copy_file(dir_ / "four.ckpt", dir_ / "resume.ckpt", fs::copy_options::overwrite_existing);
    return train(devices, strategy, "--resume resume.ckpt");
  };
  const std::vector<std::string> fsdp2 = losses(resume(2, "fsdp"));
  const std::vector<std::string> ddp2 = losses(resume(2, "ddp"));
  ASSERT_EQ(ddp2.size(), 10u);  // epoch 2's steps
  EXPECT_EQ(fsdp2, ddp2);
  const fs::path single = resume(1, "single");
  EXPECT_EQ(summary(single)["resumed_from"]["epochs_done"], 1);
  EXPECT_EQ(losses(single).size(), 10u);
}

// And back: a ddp checkpoint resumed under fsdp continues exactly as ddp does.
TEST_F(FsdpTest, ADdpCheckpointResumesUnderFsdp) {
  const fs::path first = train(2, "ddp", "--set train.epochs=1");
  fs::copy_file(first / "checkpoints" / "last.ckpt", dir_ / "ddp.ckpt");
  auto resume = [&](const std::string& strategy) {
    fs::copy_file(dir_ / "ddp.ckpt", dir_ / "resume.ckpt", fs::copy_options::overwrite_existing);
    return losses(train(2, strategy, "--resume resume.ckpt"));
  };
  EXPECT_EQ(resume("fsdp"), resume("ddp"));
}

#ifdef PLUGTRAIN_PYTHON
// A model exported from Python (python/export_model.py) is sharded by the calls of its top-level
// submodules that its graph records (nn_module_stack): the embeddings, each block, the final norm
// and the head. Two ranks: ddp's losses, bit for bit. (nanoGPT's GPT with its head untied; tied,
// the embedding and the head share one weight and stay in the root.)
TEST_F(FsdpTest, AnExportedGptShardsByItsTopLevelSubmodules) {
  std::ofstream(dir_ / "twin.py")
      << "import sys\nimport torch.nn as nn\nsys.path.insert(0, '" PLUGTRAIN_SOURCE_DIR
         "/python')\nfrom transformer_twins import GPT as Twin\n"
         "class GPT(Twin):\n    def __init__(self, vocab):\n"
         "        super().__init__(vocab, 32, 2, 2, 32)\n"
         "        self.lm_head.weight = nn.Parameter(self.lm_head.weight.detach().clone())\n";
  // The Jargon File's characters, as the text data set counts them (the log says).
  const ProcessResult first = run(1, "single", "--set train.epochs=1 --set train.steps_per_epoch=1");
  ASSERT_EQ(first.exit_code, 0) << first.out;
  const auto at = first.out.find("vocabulary: ");
  ASSERT_NE(at, std::string::npos) << first.out;
  const std::string vocab = std::to_string(std::stoi(first.out.substr(at + 12)));
  const ProcessResult exported = testing::run_process(
      "cd " + testing::shell_quote(dir_.string()) + " && " + PLUGTRAIN_PYTHON +
      " " PLUGTRAIN_SOURCE_DIR "/python/export_model.py twin.py:GPT --input 32 --dtype int64 --vocab " + vocab +
      " --args '{\"vocab\": " + vocab + "}' --out gpt.pt2");
  ASSERT_EQ(exported.exit_code, 0) << exported.out;
  write_experiment(testing::ExperimentToml(kExperiment)
                       .unset("model")
                       .set_keys("model", {{"name", "exported"}, {"file", "gpt.pt2"}})
                       .text());
  const fs::path fsdp = train(2, "fsdp");
  EXPECT_EQ(losses(fsdp), losses(train(2, "ddp")));
  EXPECT_EQ(summary(fsdp)["sharding"]["units"], 6);  // wte, wpe, h.0, h.1, ln_f, lm_head
}
#endif

// A vendor's device shards through the collective its plugin brings: the emulated accelerator's
// staged Gloo. It computes on the host's kernels, so its losses are the CPU's ddp losses.
TEST_F(FsdpTest, TheEmulatedDeviceShardsThroughItsOwnCollective) {
  const std::string args = " --set backend.name='\"emulated\"' --set backend.devices=2 --set train.epochs=1";
  const ProcessResult ddp = testing::run_process(testing::emulated_command(
      dir_, "run exp.toml --set backend.strategy='\"ddp\"'" + args, "PLUGTRAIN_EMU_DEVICES=2"));
  ASSERT_EQ(ddp.exit_code, 0) << ddp.out;
  const ProcessResult fsdp = testing::run_process(testing::emulated_command(
      dir_, "run exp.toml --set backend.strategy='\"fsdp\"'" + args, "PLUGTRAIN_EMU_DEVICES=2"));
  ASSERT_EQ(fsdp.exit_code, 0) << fsdp.out;
  EXPECT_NE(fsdp.out.find("fsdp: 4 units"), std::string::npos) << fsdp.out;
  EXPECT_EQ(losses(testing::run_folder_in_log(fsdp.out, dir_)), losses(testing::run_folder_in_log(ddp.out, dir_)));
  EXPECT_EQ(summary(testing::run_folder_in_log(fsdp.out, dir_))["device"],
            summary(testing::run_folder_in_log(ddp.out, dir_))["device"]);
}

// What sharding is for: a model whose training state does not fit a device. The emulated device
// with 72 MiB each: this GPT (width 256: 3.2 M parameters) keeps 4 x 3.2 M x 4 bytes = 51 MiB of
// parameters, gradients and AdamW moments under ddp, and its optimizer step needs temporaries of
// the parameters' size besides (at least 2 x 12.8 MiB): more than 72 MiB, out of memory. Under
// fsdp at 2 processes each rank keeps half the state (25.7 MiB), at most the root and two blocks
// gathered (6.5 MiB) and temporaries of its shard's size: about 45 MiB, which fits.
TEST_F(FsdpTest, AModelWhoseStateDoesNotFitOneDeviceTrainsSharded) {
  const std::string args =
      " --set backend.name='\"emulated\"' --set backend.devices=2 --set train.epochs=1 --set model.width=256 "
      "--set model.heads=4 --set data.global_batch_size=8";
  const std::string env = "PLUGTRAIN_EMU_DEVICES=2 PLUGTRAIN_EMU_MEMORY=72M";
  const ProcessResult ddp = testing::run_process(
      testing::emulated_command(dir_, "run exp.toml --set backend.strategy='\"ddp\"'" + args, env));
  EXPECT_NE(ddp.exit_code, 0) << ddp.out;
  EXPECT_NE(ddp.out.find("out of memory"), std::string::npos) << ddp.out;
  const ProcessResult fsdp = testing::run_process(
      testing::emulated_command(dir_, "run exp.toml --set backend.strategy='\"fsdp\"'" + args, env));
  ASSERT_EQ(fsdp.exit_code, 0) << fsdp.out;
  const nlohmann::json s = summary(testing::run_folder_in_log(fsdp.out, dir_));
  EXPECT_LE(s["epochs"][0]["memory"]["peak_bytes"].get<std::int64_t>(), 72 << 20);
  EXPECT_EQ(losses(testing::run_folder_in_log(fsdp.out, dir_)).size(), 10u);
  // With 2 MiB a device, not even a block (3.2 MiB) fits beside the root: said before training.
  const ProcessResult tiny =
      testing::run_process(testing::emulated_command(dir_, "run exp.toml --set backend.strategy='\"fsdp\"'" + args,
                                                     "PLUGTRAIN_EMU_DEVICES=2 PLUGTRAIN_EMU_MEMORY=2M"));
  EXPECT_NE(tiny.exit_code, 0) << tiny.out;
  EXPECT_NE(tiny.out.find("backend.strategy: fsdp gathers a unit beside the root"), std::string::npos) << tiny.out;
  EXPECT_EQ(tiny.out.find("epoch 1"), std::string::npos) << tiny.out;
}

}  // namespace fsdp_test
}  // namespace plugtrain
