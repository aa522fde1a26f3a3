// The S4 guide's experiment as a user runs it: examples/ce_csl_tfnet_lite.toml on a small CE-CSL
// set generated in the release layout (support/ce_csl_data.h; the real set cannot be downloaded
// here), scaled down with --set, trains tfnet_lite with CTC to a low gloss error; `plugtrain data`
// describes the set; a broken layout is one line naming the file or folder.
// ctest-label: e2e
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/ce_csl_data.h"
#include "support/experiment_folder.h"
#include "support/run_process.h"

namespace plugtrain {
namespace sign_language_test {

using testing::shell_quote;
using testing::slurp;
namespace fs = std::filesystem;

class SignLanguageTest : public testing::ExperimentFolderTest {
 protected:
  SignLanguageTest() : ExperimentFolderTest("ce_csl", "") {}
  void SetUp() override {
    ExperimentFolderTest::SetUp();
    data_ = dir_ / "CE-CSL";
    testing::write_ce_csl_split(data_, "train", 240, 48, 1);
    testing::write_ce_csl_split(data_, "dev", 60, 48, 2);
  }
  // The shipped example on the generated set, small: 16 frames of 32 x 32, a narrow model.
  std::string example(const std::string& more = "") const {
    return shell_quote(std::string(PLUGTRAIN_SOURCE_DIR) + "/examples/ce_csl_tfnet_lite.toml") +
           " --set data.path=" + shell_quote("\"" + data_.string() + "\"") +
           " --set dataset.frames=16 --set model.frames=16 --set dataset.height=32 --set dataset.width=32"
           " --set model.channels=[16,32] --set model.temporal=64 --set model.hidden=64 --set data.workers=0"
           " --set data.batch_size=16 --set optim.lr=0.003 --set schedule.warmup_epochs=0 --set train.log_interval=0 " +
           more;
  }
  fs::path data_;
};

TEST_F(SignLanguageTest, TfnetLiteLearnsTheGlossesOfCeCslVideos) {
  const testing::ProcessResult r = plugtrain("run " + example("--set train.epochs=12 --no-cache"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("CE-CSL from " + data_.string() +
                       " (train 240 videos, dev 60; 5 glosses; 16 frames of 32x32 per clip)"),
            std::string::npos)
      << r.out;
  // Videos of 8 to 30 frames: the shorter are padded, and the model reads their lengths.
  EXPECT_NE(r.out.find("data: fields input_lengths (Long, "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" to 16), read by the model's forward_batch"), std::string::npos) << r.out;
  const nlohmann::json s =
      nlohmann::json::parse(slurp(dir_ / "runs" / "ce-csl-tfnet-lite" / "version_0" / "summary.json"));
  EXPECT_EQ(s["task"], "sequence");
  // Chance: 1 to 3 of 5 glosses, in order; a model that learnt nothing gets most of each wrong.
  EXPECT_LT(s["final_test_cer"].get<double>(), 0.15) << r.out;
  EXPECT_GT(s["final_test"]["sequence_accuracy"].get<double>(), 0.7) << r.out;
  // The figures, for the record: the last epoch's line and the summary's.
  std::cout << "[ figures  ] "
            << r.out.substr(r.out.rfind("\nepoch ") + 1,
                            r.out.find('\n', r.out.rfind("\nepoch ") + 1) - r.out.rfind("\nepoch "))
            << "[ figures  ] final test cer " << s["final_test_cer"] << ", sequence accuracy "
            << s["final_test"]["sequence_accuracy"] << "\n";
}

// The clips' lengths are sharded with their clips: two ddp processes learn the glosses too.
TEST_F(SignLanguageTest, TfnetLiteLearnsUnderDdpWithEachClipsLength) {
  const testing::ProcessResult r = plugtrain(
      "run " + example("--set backend.name='\"cpu\"' --set backend.devices=2 --set train.epochs=12 --no-cache"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json s =
      nlohmann::json::parse(slurp(dir_ / "runs" / "ce-csl-tfnet-lite" / "version_0" / "summary.json"));
  EXPECT_EQ(s["strategy"], "ddp");
  EXPECT_EQ(s["world_size"], 2);
  EXPECT_LT(s["final_test_cer"].get<double>(), 0.2) << r.out;
}

TEST_F(SignLanguageTest, DataDescribesTheSetWithItsGlosses) {
  const testing::ProcessResult r = plugtrain("data " + example());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("classes: 5: 0 你, 1 喜欢, 2 学习, 3 我, 4 手语"), std::string::npos)
      << "the glosses, in UTF-8 order: " << r.out;
  EXPECT_NE(r.out.find("splits: train 240 (sequences of 1 to 3 classes), test 60"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sample: 3x512x32 (C x H x W)"), std::string::npos)
      << "16 frames of 32 rows, stacked: " << r.out;
}

TEST_F(SignLanguageTest, ABrokenLayoutIsOneLineNamingTheFileOrFolder) {
  fs::remove_all(data_ / "video" / "dev" / "B" / "dev-0001");
  const testing::ProcessResult missing = plugtrain("run " + example());
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(
      missing.out.find((data_ / "video" / "dev" / "B" / "dev-0001").string() + ": no frame folder for this video"),
      std::string::npos)
      << missing.out;

  std::ofstream(data_ / "label" / "train.csv") << "Number,Translator,Chinese Sentences,Note\ntrain-0000,A,x,\n";
  const testing::ProcessResult no_gloss = plugtrain("run " + example());
  EXPECT_NE(no_gloss.exit_code, 0);
  EXPECT_NE(no_gloss.out.find((data_ / "label" / "train.csv").string() + ": no 'Gloss' column in its header"),
            std::string::npos)
      << no_gloss.out;
  // An empty Gloss field, a Number that is not a folder name, a frame that is not an image.
  std::ofstream(data_ / "label" / "train.csv")
      << "Number,Translator,Chinese Sentences,Gloss,Note\ntrain-0000,A,\"x, y\",,\n";
  const testing::ProcessResult empty = plugtrain("run " + example());
  EXPECT_NE(empty.out.find((data_ / "label" / "train.csv").string() + ":2: no glosses in its Gloss field"),
            std::string::npos)
      << empty.out;
  std::ofstream(data_ / "label" / "train.csv") << "Number,Translator,Chinese Sentences,Gloss,Note\n..,A,x,我,\n";
  const testing::ProcessResult escape = plugtrain("run " + example());
  EXPECT_NE(escape.out.find(":2: '..' in column 'Number' is not a folder name"), std::string::npos) << escape.out;
  fs::create_directories(data_ / "video" / "train" / "A" / "train-0000");
  std::ofstream(data_ / "video" / "train" / "A" / "train-0000" / "000001.jpg") << "not a jpeg";
  std::ofstream(data_ / "label" / "train.csv")
      << "Number,Translator,Chinese Sentences,Gloss,Note\ntrain-0000,A,x,我,\n";
  const testing::ProcessResult corrupt = plugtrain("run " + example());
  EXPECT_NE(corrupt.out.find((data_ / "video" / "train" / "A" / "train-0000" / "000001.jpg").string() + ": "),
            std::string::npos)
      << corrupt.out;
  for (const auto* r : {&missing, &no_gloss, &empty, &escape, &corrupt}) {  // the error is the last line, and one line
    EXPECT_NE(r->exit_code, 0) << r->out;
    const std::size_t error = r->out.find("plugtrain: error: data set 'ce-csl' (plugin 'sign_language'): ");
    ASSERT_NE(error, std::string::npos) << r->out;
    EXPECT_EQ(r->out.find('\n', error), r->out.size() - 1) << r->out;
  }
}

// The clips' lengths reach the model in its batch (Model::forward_batch): dp does not split them,
// and a step with them is not recorded as a graph.
TEST_F(SignLanguageTest, WhatCannotCarryTheClipsLengthsIsRefusedBeforeAnyWork) {
  const testing::ProcessResult dp =
      plugtrain("run " + example("--set backend.devices=2 --set backend.strategy='\"dp\"'"));
  EXPECT_EQ(dp.exit_code, 2) << dp.out;
  EXPECT_NE(
      dp.out.find("strategy dp splits only the input over its replicas; data set 'ce-csl' gives named fields: use ddp"),
      std::string::npos)
      << dp.out;

  const testing::ProcessResult graphs =
      plugtrain("run " + example("--set backend.name='\"graphrec\"' --set train.graphs=true --plugin-path " +
                                 shell_quote(std::string(PLUGTRAIN_TEST_PLUGIN_DIR) + "/graph_recorder")));
  EXPECT_EQ(graphs.exit_code, 2) << graphs.out;
  EXPECT_NE(graphs.out.find("cannot be replayed from a graph: data set 'ce-csl' gives named fields"), std::string::npos)
      << graphs.out;
  EXPECT_FALSE(fs::exists(dir_ / "runs")) << "all refused before a run folder is made";
}

}  // namespace sign_language_test
}  // namespace plugtrain
