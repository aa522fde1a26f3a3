// The text data set's `vocabulary = "bpe"` end to end: a byte-level BPE tokenizer.json trained on
// the Jargon File by Python's tokenizers (tests/python/bpe_reference.py), a tiny GPT run on the
// whole file through `plugtrain run` (it learns, its vocabulary is the tokenizer's), `plugtrain
// generate` prints the sub-words' text (Python's decode of the same ids), and the one-line
// refusals of a missing or foreign tokenizer before any training.
#include <cmath>
#include <cstdint>
#include <fstream>
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

std::string bpe_experiment(const std::string& dataset_table) {
  return testing::tiny_jargon_gpt("jargon-bpe", dataset_table, /*epochs=*/2, /*steps=*/40);
}

class BpeJargonRun : public testing::ExperimentFolderTest {
 protected:
  BpeJargonRun() : ExperimentFolderTest("bpe_run", "") {}
  void SetUp() override {
    if (!fs::exists(testing::kJargonTextFile))
      GTEST_SKIP() << testing::kJargonTextFile << " is missing: install Debian's jargon-text (scripts/setup does)";
    ExperimentFolderTest::SetUp();
    fs::create_directories(dir_ / "tok");
    const ProcessResult r = testing::run_process("gunzip -c " + std::string(testing::kJargonTextFile) + " > " +
                                                 (dir_ / "jargon.txt").string() + " && " + PLUGTRAIN_PYTHON +
                                                 " " PLUGTRAIN_SOURCE_DIR "/tests/python/bpe_reference.py " +
                                                 (dir_ / "jargon.txt").string() + " " + (dir_ / "tok").string());
    ASSERT_EQ(r.exit_code, 0) << r.out;
  }
  void expect_refused(const std::string& dataset_table, const std::string& part) {
    write_experiment(bpe_experiment(dataset_table));
    const ProcessResult r = plugtrain("run exp.toml");
    EXPECT_NE(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find(part), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(dir_ / "runs" / "jargon-bpe" / "version_0" / "metrics.csv")) << "refused before training";
  }
};

TEST_F(BpeJargonRun, ATinyGptLearnsTheJargonFileInBpeTokensAndGeneratesTheirText) {
  // A path relative to the working folder, as a user writes it.
  write_experiment(bpe_experiment("vocabulary = \"bpe\"\ntokenizer = \"tok/tokenizer.json\"\n"));
  const ProcessResult r = plugtrain("run exp.toml");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const fs::path run = dir_ / "runs" / "jargon-bpe" / "version_0";
  ASSERT_TRUE(fs::exists(run / "summary.json"));
  const nlohmann::json classes = nlohmann::json::parse(slurp(run / "classes.json"));
  EXPECT_EQ(classes["num_classes"], 2000);
  EXPECT_EQ(classes["classes"][0], "<|endoftext|>");
  EXPECT_NE(r.out.find("vocabulary: 2000 byte-level BPE tokens of tok/tokenizer.json (1681817 bytes as 585510 tokens"),
            std::string::npos)
      << r.out;
  std::vector<double> losses, val_losses;
  for (const auto& row : testing::metrics_rows(run / "metrics.csv", "step")) losses.push_back(std::stod(row.at(3)));
  ASSERT_EQ(losses.size(), 8u);
  EXPECT_LT(losses.back(), losses.front() - 0.5) << "80 steps learn the frequent tokens";
  EXPECT_LT(losses.back(), std::log(2000.0)) << "below the uniform guess";

  const ProcessResult g = testing::run_process(
      command("generate runs/jargon-bpe/version_0 --prompt 'hacker ' --tokens 30 --top-k 10 --seed 7 --json"), false);
  ASSERT_EQ(g.exit_code, 0) << g.out;
  const nlohmann::json out = nlohmann::json::parse(g.out);
  ASSERT_EQ(out["tokens"].size(), 30u);
  // The text is the tokens' sub-words (Python's decode of the same ids), not their numbers.
  std::ofstream(dir_ / "tokens.json") << out["tokens"].dump();
  const ProcessResult decoded =
      testing::run_process(std::string(PLUGTRAIN_PYTHON) +
                               " -c \"import json, sys; from tokenizers import Tokenizer; "
                               "t = Tokenizer.from_file(sys.argv[1]); print(t.decode(json.load(open(sys.argv[2])), "
                               "skip_special_tokens=False), "
                               "end='')\" " +
                               (dir_ / "tok" / "tokenizer.json").string() + " " + (dir_ / "tokens.json").string(),
                           false);
  ASSERT_EQ(decoded.exit_code, 0);
  EXPECT_EQ(out["text"].get<std::string>(), decoded.out);
  EXPECT_GT(out["text"].get<std::string>().size(), 30u) << "sub-words, most of them longer than a byte";
}

TEST_F(BpeJargonRun, AMissingOrForeignTokenizerIsRefusedInOneLineBeforeTraining) {
  expect_refused("vocabulary = \"bpe\"\n", "[dataset] vocabulary = \"bpe\" needs [dataset] tokenizer");
  expect_refused("vocabulary = \"bpe\"\ntokenizer = \"tok/wordpiece.json\"\n",
                 "'tok/wordpiece.json': WordPiece is not supported");
  expect_refused("vocabulary = \"bpe\"\ntokenizer = \"jargon.txt\"\n", "'jargon.txt': not JSON");
  expect_refused("vocabulary = \"bpe\"\ntokenizer = \"tok/none.json\"\n", "'tok/none.json': cannot be read");
}

}  // namespace
}  // namespace plugtrain
