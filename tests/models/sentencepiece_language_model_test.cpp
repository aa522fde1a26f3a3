// The text data set's `vocabulary = "sentencepiece"` end to end, on the Jargon File through
// `plugtrain run`: a model trained on the training split (train_tokenizer) is kept in the cache
// and read, not trained, by the next run; a tiny GPT learns in its pieces; `plugtrain generate`
// prints the pieces' text (Python's sentencepiece decodes the same ids to it); and what cannot
// work is refused in one line before training.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/experiment_folder.h"
#include "support/jargon_experiment.h"
#include "support/metrics_csv.h"

namespace plugtrain {
namespace {

namespace fs = std::filesystem;
using testing::ProcessResult;
using testing::slurp;

std::string spm_experiment(const std::string& dataset_table) {
  return testing::tiny_jargon_gpt("jargon-spm", dataset_table, /*epochs=*/1, /*steps=*/60);
}

class SentencePieceJargonRun : public testing::ExperimentFolderTest {
 protected:
  SentencePieceJargonRun() : ExperimentFolderTest("spm_run", "") {}
  void SetUp() override {
    if (!fs::exists(testing::kJargonTextFile))
      GTEST_SKIP() << testing::kJargonTextFile << " is missing: install Debian's jargon-text (scripts/setup does)";
    ExperimentFolderTest::SetUp();
  }
  // The test's own tokenizer cache, not the user's.
  ProcessResult run(const std::string& args) const {
    return testing::run_process(testing::plugtrain_command(args, "XDG_CACHE_HOME=" + (dir_ / "cache").string(), dir_));
  }
  void expect_refused(const std::string& dataset_table, const std::string& part) {
    write_experiment(spm_experiment(dataset_table));
    const ProcessResult r = run("run exp.toml");
    EXPECT_NE(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find(part), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(dir_ / "runs" / "jargon-spm" / "version_0" / "metrics.csv")) << "refused before training";
  }
};

TEST_F(SentencePieceJargonRun, ATrainedModelIsCachedAndATinyGptLearnsInItsPiecesAndGeneratesTheirText) {
  write_experiment(
      spm_experiment("vocabulary = \"sentencepiece\"\ntrain_tokenizer = \"unigram\"\ntokenizer_pieces = 500\n"));
  const ProcessResult first = run("run exp.toml");
  ASSERT_EQ(first.exit_code, 0) << first.out;
  const fs::path cache = dir_ / "cache" / "plugtrain" / "tokenizers";
  std::vector<fs::path> models;
  for (const auto& entry : fs::directory_iterator(cache))
    if (entry.path().extension() == ".model") models.push_back(entry.path());
  ASSERT_EQ(models.size(), 1u) << "one model, and no training files left";
  EXPECT_NE(first.out.find("vocabulary: 500 SentencePiece pieces of " + models[0].string() + " ("), std::string::npos)
      << first.out;
  const fs::path run_folder = dir_ / "runs" / "jargon-spm" / "version_0";
  const nlohmann::json classes = nlohmann::json::parse(slurp(run_folder / "classes.json"));
  EXPECT_EQ(classes["num_classes"], 500);
  EXPECT_EQ(classes["tokenizer"], "tokenizer.model") << "the run keeps the model its ids came from";
  EXPECT_EQ(slurp(run_folder / "tokenizer.model"), slurp(models[0]));
  std::vector<double> losses;
  for (const auto& row : testing::metrics_rows(run_folder / "metrics.csv", "step"))
    losses.push_back(std::stod(row.at(3)));
  ASSERT_EQ(losses.size(), 6u);
  EXPECT_LT(losses.back(), losses.front() - 0.5) << "60 steps learn the frequent pieces";
  const nlohmann::json summary = nlohmann::json::parse(slurp(run_folder / "summary.json"));
  const double per_token = summary["final_test"]["bits_per_token"], per_byte = summary["final_test"]["bits_per_byte"];
  // Bits per byte are bits per piece over the bytes a piece holds: pieces hold a byte or more.
  EXPECT_LT(per_byte, per_token) << "pieces of several bytes make bits per byte the smaller figure";

  // The second run reads the model (the same file, not written again).
  const auto written = fs::last_write_time(models[0]);
  const ProcessResult second = run("run exp.toml");
  ASSERT_EQ(second.exit_code, 0) << second.out;
  EXPECT_NE(second.out.find(models[0].string()), std::string::npos) << second.out;
  EXPECT_NE(second.out.find(" tokens, read from the token cache "), std::string::npos) << second.out;
  EXPECT_EQ(fs::last_write_time(models[0]), written);

  const ProcessResult g = testing::run_process(
      testing::plugtrain_command(
          "generate runs/jargon-spm/version_0 --prompt 'The hacker' --tokens 30 --top-k 10 --seed 7 --json", "", dir_),
      false);
  ASSERT_EQ(g.exit_code, 0) << g.out;
  const nlohmann::json out = nlohmann::json::parse(g.out);
  ASSERT_EQ(out["tokens"].size(), 30u);
  std::ofstream(dir_ / "ids.json") << out["tokens"].dump();
  const ProcessResult decoded = testing::run_process(
      std::string(PLUGTRAIN_PYTHON) +
          " -c \"import json, sys, sentencepiece as s; p = s.SentencePieceProcessor(model_file=sys.argv[1]); "
          "ids = p.encode('The hacker'); "
          "print(json.dumps([ids, p.decode(ids + json.load(open(sys.argv[2])))]), end='')\" " +
          models[0].string() + " " + (dir_ / "ids.json").string(),
      false);
  ASSERT_EQ(decoded.exit_code, 0);
  const nlohmann::json python = nlohmann::json::parse(decoded.out);
  EXPECT_EQ(out["prompt_tokens"], python[0]) << "the prompt in the run's tokenizer, as Python encodes it";
  EXPECT_EQ("The hacker" + out["text"].get<std::string>(), python[1].get<std::string>())
      << "the generated pieces decoded after the prompt, spaces included";
}

TEST_F(SentencePieceJargonRun, WhatCannotWorkIsRefusedInOneLineBeforeTraining) {
  expect_refused("vocabulary = \"sentencepiece\"\n", "takes either tokenizer = \"m.model\"");
  expect_refused("vocabulary = \"sentencepiece\"\ntokenizer = \"m.model\"\ntrain_tokenizer = \"bpe\"\n", "not both");
  expect_refused("vocabulary = \"char\"\ntrain_tokenizer = \"bpe\"\n",
                 "train_tokenizer trains a SentencePiece model: it needs vocabulary = \"sentencepiece\"");
  std::ofstream(dir_ / "not.model") << "plain text\n";
  expect_refused("vocabulary = \"sentencepiece\"\ntokenizer = \"not.model\"\n",
                 "'not.model' is not a SentencePiece model");
  expect_refused(
      "vocabulary = \"sentencepiece\"\ntrain_tokenizer = \"bpe\"\ntokenizer_pieces = 1000000\n",
      "SentencePiece cannot train a bpe tokenizer of 1000000 pieces on it: lower [dataset] tokenizer_pieces");
}

}  // namespace
}  // namespace plugtrain
