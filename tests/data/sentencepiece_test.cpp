// SentencePiece tokenizers (plugins/datasets/readers/sentencepiece_tokenizer.h) against Python's
// `sentencepiece` on the same model files, on the whole Jargon File (Debian's jargon-text, real
// English): a BPE and a unigram model trained here through libsentencepiece give the same ids as
// Python's encode of the same text, and decode(encode(text)) gives the text back on both sides.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "readers/sentencepiece_tokenizer.h"
#include "support/jargon_experiment.h"
#include "support/run_process.h"
#include "support/temp_dir.h"

namespace bundled_datasets {
namespace {

namespace fs = std::filesystem;
using plugtrain::testing::kJargonTextFile;

std::string read_all(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

class SentencePieceParity : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kJargonTextFile)) GTEST_SKIP() << "Debian's jargon-text is not installed";
    text_file_ = dir_.path() / "jargon.txt";
    ASSERT_EQ(plugtrain::testing::run_process("gunzip -c " + std::string(kJargonTextFile) + " > " + text_file_.string())
                  .exit_code,
              0);
    text_ = read_all(text_file_);
  }
  plugtrain::testing::TempDir dir_;
  fs::path text_file_;
  std::string text_;

  // Trains a `type` model of 2,000 pieces on the whole file and compares with Python on it.
  void expect_parity(const std::string& type) {
    const fs::path model = dir_.path() / (type + ".model");
    SentencePieceTokenizer::train(text_file_.string(), model.string(), {type, 2000});
    const SentencePieceTokenizer tokenizer(model.string());
    EXPECT_EQ(tokenizer.size(), 2000);
    const std::vector<std::int64_t> ids = tokenizer.encode(text_);
    EXPECT_EQ(tokenizer.decode(ids), text_);
    EXPECT_LT(ids.size(), text_.size() / 2) << "a 2,000-piece model should at least halve the bytes";
    const fs::path python_ids = dir_.path() / "python_ids.json";
    const auto r = plugtrain::testing::run_process(
        std::string(PLUGTRAIN_PYTHON) +
        " -c \"import json, sys, sentencepiece as spm; p = spm.SentencePieceProcessor(model_file=sys.argv[1]); "
        "text = open(sys.argv[2], encoding='utf-8', newline='').read(); ids = p.encode(text); "
        "assert p.decode(ids) == text, 'python round trip'; json.dump(ids, open(sys.argv[3], 'w'))\" " +
        model.string() + " " + text_file_.string() + " " + python_ids.string());
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const std::vector<std::int64_t> expected =
        nlohmann::json::parse(read_all(python_ids)).get<std::vector<std::int64_t>>();
    ASSERT_EQ(ids.size(), expected.size());
    EXPECT_EQ(ids, expected);
  }
};

TEST_F(SentencePieceParity, BpeIdsEqualPythonsOnTheWholeJargonFileAndDecodeGivesTheTextBack) { expect_parity("bpe"); }

TEST_F(SentencePieceParity, UnigramIdsEqualPythonsOnTheWholeJargonFileAndDecodeGivesTheTextBack) {
  expect_parity("unigram");
}

TEST(SentencePieceErrors, AFileThatIsNotAModelAndTooManyPiecesAreOneLineEach) {
  plugtrain::testing::TempDir dir;
  std::ofstream(dir.path() / "not.model") << "hello, this is text\n";
  try {
    SentencePieceTokenizer((dir.path() / "not.model").string());
    FAIL() << "a text file was read as a model";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not.model' is not a SentencePiece model"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
  std::ofstream(dir.path() / "small.txt") << "a few words of text\nand a second line\n";
  try {
    SentencePieceTokenizer::train((dir.path() / "small.txt").string(), (dir.path() / "m.model").string(),
                                  {"bpe", 5000});
    FAIL() << "5000 pieces were trained from 40 bytes";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("small.txt': SentencePiece cannot train a bpe tokenizer of 5000 pieces on it"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace bundled_datasets
