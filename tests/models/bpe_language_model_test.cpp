// The text data set's `vocabulary = "bpe"` end to end: a byte-level BPE tokenizer.json trained on
// the Jargon File by Python's tokenizers (tests/python/bpe_reference.py), a tiny GPT run on the
// whole file through `plugtrain run` (it learns, its vocabulary is the tokenizer's), `plugtrain
// generate` prints the sub-words' text (Python's decode of the same ids), and the one-line
// refusals of a missing or foreign tokenizer before any training.
#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>
#include <tuple>
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
  // The test's own token cache, not the user's.
  std::string in_folder(const std::string& args) const {
    return testing::plugtrain_command(args, "XDG_CACHE_HOME=" + (dir_ / "cache").string(), dir_);
  }
  ProcessResult run(const std::string& args) const { return testing::run_process(in_folder(args)); }
  nlohmann::json json_of(const std::string& args) const {
    const ProcessResult r = testing::run_process(in_folder(args), false);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
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
  const ProcessResult r = run("run exp.toml");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const fs::path run_folder = dir_ / "runs" / "jargon-bpe" / "version_0";
  ASSERT_TRUE(fs::exists(run_folder / "summary.json"));
  const nlohmann::json classes = nlohmann::json::parse(slurp(run_folder / "classes.json"));
  EXPECT_EQ(classes["num_classes"], 2000);
  EXPECT_EQ(classes["classes"][0], "<|endoftext|>");
  EXPECT_NE(r.out.find("vocabulary: 2000 byte-level BPE tokens of tok/tokenizer.json (1681817 bytes as 585510 tokens"),
            std::string::npos)
      << r.out;
  std::vector<double> losses, val_losses;
  for (const auto& row : testing::metrics_rows(run_folder / "metrics.csv", "step"))
    losses.push_back(std::stod(row.at(3)));
  ASSERT_EQ(losses.size(), 8u);
  EXPECT_LT(losses.back(), losses.front() - 0.5) << "80 steps learn the frequent tokens";
  EXPECT_LT(losses.back(), std::log(2000.0)) << "below the uniform guess";

  // The run keeps its tokenizer, and the text's tokens are cached for the next run.
  EXPECT_EQ(classes["tokenizer"], "tokenizer.json");
  EXPECT_EQ(slurp(run_folder / "tokenizer.json"), slurp(dir_ / "tok" / "tokenizer.json"));
  EXPECT_NE(r.out.find(" tokens, tokenized in "), std::string::npos) << r.out;

  const nlohmann::json out =
      json_of("generate runs/jargon-bpe/version_0 --prompt 'The hacker' --tokens 30 --top-k 10 --seed 7 --json");
  ASSERT_EQ(out["tokens"].size(), 30u);
  // The text is the tokens' sub-words (Python's decode of the same ids), not their numbers.
  std::ofstream(dir_ / "tokens.json") << out["tokens"].dump();
  const ProcessResult decoded =
      testing::run_process(std::string(PLUGTRAIN_PYTHON) +
                               " -c \"import json, sys; from tokenizers import Tokenizer; "
                               "t = Tokenizer.from_file(sys.argv[1]); print(json.dumps([t.encode('The hacker').ids, "
                               "t.decode(json.load(open(sys.argv[2])), skip_special_tokens=False)]), end='')\" " +
                               (dir_ / "tok" / "tokenizer.json").string() + " " + (dir_ / "tokens.json").string(),
                           false);
  ASSERT_EQ(decoded.exit_code, 0);
  const nlohmann::json python = nlohmann::json::parse(decoded.out);
  EXPECT_EQ(out["prompt_tokens"], python[0]) << "the prompt in the run's tokenizer, as Python encodes it";
  EXPECT_EQ(out["text"].get<std::string>(), python[1].get<std::string>());
  EXPECT_GT(out["text"].get<std::string>().size(), 30u) << "sub-words, most of them longer than a byte";

  // tokenize: the run's tokenizer and the file give Python's ids of GPT-2's edge cases.
  const nlohmann::json python_ids = nlohmann::json::parse(slurp(dir_ / "tok" / "edge_ids.json"));
  for (const std::string from : {"--run runs/jargon-bpe/version_0", "--tokenizer tok/tokenizer.json"}) {
    const nlohmann::json t = json_of("tokenize tok/edge.txt " + from + " --json");
    EXPECT_EQ(t["ids"], python_ids) << from;
    EXPECT_TRUE(t["round_trip"].get<bool>()) << from;
    EXPECT_EQ(t["pieces"].size(), python_ids.size()) << from;
  }
  const ProcessResult foreign = run("tokenize tok/edge.txt --tokenizer jargon.txt");
  EXPECT_EQ(foreign.exit_code, 2) << foreign.out;
  EXPECT_NE(foreign.out.find("'jargon.txt' is not a tokenizer any data set opens"), std::string::npos) << foreign.out;

  // A resume refuses a tokenizer file that changed since (retrained in place) before training, and
  // reads the cached tokens of the one it trained with. (Another path is another experiment: the
  // checkpoint's own check refuses it.)
  const std::string tokenizer = slurp(dir_ / "tok" / "tokenizer.json");
  fs::copy_file(dir_ / "tok" / "tokenizer_prefix.json", dir_ / "tok" / "tokenizer.json",
                fs::copy_options::overwrite_existing);
  const ProcessResult refused = run("run exp.toml --resume last --set train.epochs=3");
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  EXPECT_NE(refused.out.find("tok/tokenizer.json' is not the tokenizer this run was trained with"), std::string::npos)
      << refused.out;
  EXPECT_EQ(testing::metrics_rows(run_folder / "metrics.csv", "step").size(), 8u) << "nothing trained";
  std::ofstream(dir_ / "tok" / "tokenizer.json", std::ios::binary | std::ios::trunc) << tokenizer;
  const ProcessResult resumed = run("run exp.toml --resume last --set train.epochs=3");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  EXPECT_NE(resumed.out.find(" tokens, read from the token cache "), std::string::npos) << resumed.out;
  EXPECT_EQ(testing::metrics_rows(run_folder / "metrics.csv", "step").size(), 12u) << "a third epoch of 40 steps";
}

// nanoGPT's layout of the same ids (Python's encode of the whole file), little-endian, `width`
// bytes each: the first 90% train.bin, the rest val.bin.
void write_token_folder(const fs::path& folder, const std::vector<std::int64_t>& ids, int width,
                        std::int64_t vocab_size) {
  fs::create_directories(folder);
  const std::size_t cut = ids.size() * 9 / 10;
  for (const auto& [name, begin, end] :
       {std::tuple{"train.bin", std::size_t{0}, cut}, std::tuple{"val.bin", cut, ids.size()}}) {
    std::ofstream out(folder / name, std::ios::binary);
    for (std::size_t i = begin; i < end; ++i)
      for (int k = 0; k < width; ++k) out.put(char((ids[i] >> (8 * k)) & 0xFF));
  }
  nlohmann::json meta = {{"vocab_size", vocab_size}};
  if (width == 4) meta["dtype"] = "uint32";
  std::ofstream(folder / "meta.json") << meta.dump();
}

TEST_F(BpeJargonRun, ATokensFolderNamesItsTokenizerAndGenerateDecodesWithIt) {
  const std::vector<std::int64_t> ids = nlohmann::json::parse(slurp(dir_ / "tok" / "ids.json"));
  write_token_folder(dir_ / "tokens16", ids, 2, 2000);
  write_token_folder(dir_ / "tokens32", ids, 4, 2000);
  write_token_folder(dir_ / "too_many", ids, 2, 5000);
  const auto experiment = [](const std::string& folder) {
    std::string e = bpe_experiment("tokenizer = \"tok/tokenizer.json\"\n");
    const std::string text = "dataset = \"text\"", jargon = testing::kJargonTextFile;
    e.replace(e.find(text), text.size(), "dataset = \"tokens\"");
    e.replace(e.find(jargon), jargon.size(), folder);
    return e;
  };
  write_experiment(experiment("tokens32"));
  const ProcessResult wide = run("run exp.toml --set train.epochs=1 --set train.steps_per_epoch=5");
  ASSERT_EQ(wide.exit_code, 0) << wide.out;
  write_experiment(experiment("tokens16"));
  const ProcessResult r = run("run exp.toml");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const fs::path run_folder = dir_ / "runs" / "jargon-bpe" / "version_1";
  const nlohmann::json classes = nlohmann::json::parse(slurp(run_folder / "classes.json"));
  EXPECT_EQ(classes["tokenizer"], "tokenizer.json");
  EXPECT_EQ(classes["classes"][0], "<|endoftext|>") << "the tokenizer's pieces name the ids";
  const nlohmann::json summary = nlohmann::json::parse(slurp(run_folder / "summary.json"));
  EXPECT_GT(summary["final_test"]["bits_per_byte"].get<double>(), 0)
      << "the pieces give the bytes: bits per byte exist";
  const nlohmann::json out =
      json_of("generate runs/jargon-bpe/version_1 --prompt 'The hacker' --tokens 20 --top-k 10 --seed 3 --json");
  ASSERT_EQ(out["tokens"].size(), 20u);
  EXPECT_GT(out["text"].get<std::string>().size(), 20u) << "text, not numbers";

  write_experiment(experiment("too_many"));
  const ProcessResult refused = run("run exp.toml");
  EXPECT_NE(refused.exit_code, 0) << refused.out;
  EXPECT_NE(refused.out.find("vocab_size 5000 is more than the 2000 tokens of [dataset] tokenizer"), std::string::npos)
      << refused.out;
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
