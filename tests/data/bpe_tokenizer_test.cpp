// Our byte-level BPE reader (plugins/datasets/readers/bpe_tokenizer.h) against Hugging Face's
// Python tokenizers on the same tokenizer.json: a GPT-2-style tokenizer trained here by
// tests/python/bpe_reference.py on the whole Jargon File (Debian's jargon-text, real English)
// gives the same ids as Python's encode of the whole file, and of a string of GPT-2's pattern's
// edge cases; decode(encode(text)) gives the text back. Tokenizers of other kinds are refused.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "readers/bpe_tokenizer.h"
#include "support/jargon_experiment.h"
#include "support/run_process.h"

namespace bundled_datasets {
namespace {

namespace fs = std::filesystem;
using plugtrain::testing::kJargonTextFile;
using plugtrain::testing::run_process;
using plugtrain::testing::slurp;

// Python's side, beside this file's folder (the test binary has no source-folder define of its own).
const fs::path kReference = fs::path(__FILE__).parent_path().parent_path() / "python" / "bpe_reference.py";

std::vector<std::int64_t> ids_in(const fs::path& file) {
  return nlohmann::json::parse(slurp(file)).get<std::vector<std::int64_t>>();
}

// One Python run for the whole suite: it trains the tokenizer and writes every file the tests read.
class BpeParity : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!fs::exists(kJargonTextFile)) return;
    dir_ = fs::temp_directory_path() / ("plugtrain-bpe-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    text_file_ = dir_ / "jargon.txt";
    ASSERT_EQ(run_process("gunzip -c " + std::string(kJargonTextFile) + " > " + text_file_.string()).exit_code, 0);
    const auto r = run_process(std::string(PLUGTRAIN_PYTHON) + " " + kReference.string() + " " + text_file_.string() +
                               " " + dir_.string());
    ASSERT_EQ(r.exit_code, 0) << r.out;
  }
  static void TearDownTestSuite() {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  void SetUp() override {
    if (dir_.empty()) GTEST_SKIP() << "Debian's jargon-text is not installed";
  }
  static fs::path file(const std::string& name) { return dir_ / name; }

  static fs::path dir_, text_file_;
};
fs::path BpeParity::dir_;
fs::path BpeParity::text_file_;

TEST_F(BpeParity, IdsEqualPythonsOnTheWholeJargonFileAndDecodeGivesTheTextBack) {
  const BpeTokenizer tokenizer(file("tokenizer.json").string());
  EXPECT_EQ(tokenizer.size(), 2000);
  EXPECT_EQ(tokenizer.token_texts()[0], "<|endoftext|>");
  const std::string text = slurp(text_file_);
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::int64_t> ids = tokenizer.encode(text);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::vector<std::int64_t> expected = ids_in(file("ids.json"));
  ASSERT_EQ(ids.size(), expected.size());
  EXPECT_EQ(ids, expected);
  EXPECT_EQ(tokenizer.decode(ids), text);
  EXPECT_LT(ids.size(), text.size() / 2) << "2,000 tokens should at least halve the bytes";
  const double python = nlohmann::json::parse(slurp(file("seconds.json")))["encode"].get<double>();
  std::cout << "Jargon File: " << text.size() << " bytes, " << ids.size() << " ids; encode " << seconds << " s here, "
            << python << " s in Python's tokenizers\n";
}

TEST_F(BpeParity, GptTwosPatternEdgeCasesEncodeAsPythonsWithBothMergeFormsAndAPrefixSpace) {
  const std::string edge = slurp(file("edge.txt"));
  ASSERT_NE(edge.find("<|endoftext|>"), std::string::npos);
  const std::vector<std::int64_t> expected = ids_in(file("edge_ids.json"));
  for (const char* name : {"tokenizer.json", "tokenizer_strings.json"}) {
    const BpeTokenizer tokenizer(file(name).string());
    const std::vector<std::int64_t> ids = tokenizer.encode(edge);
    EXPECT_EQ(ids, expected) << name;
    EXPECT_EQ(tokenizer.decode(ids), edge) << name;
    EXPECT_EQ(std::count(ids.begin(), ids.end(), 0), 2) << "<|endoftext|> is one token, matched before the regex";
  }
  const BpeTokenizer prefix(file("tokenizer_prefix.json").string());
  EXPECT_EQ(prefix.encode(edge), ids_in(file("edge_prefix_ids.json")));
}

TEST_F(BpeParity, EveryKindOfCodePointAndAddedTokensThatStripOrMatchWholeWordsEncodeAsPythons) {
  const std::string mixed = slurp(file("random.txt"));
  const BpeTokenizer plain(file("tokenizer.json").string());
  const std::vector<std::int64_t> ids = plain.encode(mixed);
  EXPECT_EQ(ids, ids_in(file("random_ids.json")));
  EXPECT_EQ(plain.decode(ids), mixed);
  const BpeTokenizer added(file("tokenizer_added.json").string());
  EXPECT_EQ(added.size(), 2001) << "<mask> after the vocab; \"hack\" is the vocab's own id";
  EXPECT_EQ(added.encode(mixed), ids_in(file("random_added_ids.json")));
}

void expect_refused(const fs::path& tokenizer_file, const std::string& part) {
  try {
    BpeTokenizer tokenizer(tokenizer_file.string());
    ADD_FAILURE() << tokenizer_file << " was read";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'" + tokenizer_file.string() + "'"), std::string::npos) << what;
    EXPECT_NE(what.find(part), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST_F(BpeParity, OtherTokenizersAndBrokenFilesAreRefusedInOneLineNamingTheFile) {
  expect_refused(file("wordpiece.json"), "WordPiece is not supported");
  expect_refused(file("unigram.json"), "Unigram is not supported");
  expect_refused(file("whitespace.json"), "the pre-tokenizer Whitespace is not supported");
  expect_refused(file("bad_merge.json"), "names \"zq\", which is not in the vocab");
  expect_refused(text_file_, "not JSON");
  expect_refused(file("ids.json"), "not a Hugging Face tokenizer.json");
  expect_refused(file("no such.json"), "cannot be read");
}

}  // namespace
}  // namespace bundled_datasets
