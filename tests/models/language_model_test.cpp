// Language models and transformers end to end: the zoo's gpt and vit against Python twins in the
// manner of llm.c's test (the same weights and batches give the same losses for 10 AdamW steps in
// fp32), the text data set on the real Jargon File, generation, and the one-line refusals.
#include <cmath>
#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/experiment_folder.h"
#include "support/experiment_toml.h"
#include "support/jargon_experiment.h"
#include "support/metrics_csv.h"

namespace plugtrain {
namespace {

namespace fs = std::filesystem;
using testing::ExperimentFolderTest;
using testing::ProcessResult;
using testing::slurp;

// The Python twins' sizes (tests/python/transformer_reference.py).
constexpr int kVocab = 50, kContext = 16, kBatch = 8, kSteps = 10;

// The column `name` of every epoch row of a run's metrics.csv.
std::vector<double> epoch_column(const fs::path& run, const std::string& name) {
  std::istringstream lines(slurp(run / "metrics.csv"));
  std::string header;
  std::getline(lines, header);
  std::vector<std::string> columns;
  std::istringstream cells(header);
  for (std::string c; std::getline(cells, c, ',');) columns.push_back(c);
  std::size_t at = 0;
  while (at < columns.size() && columns[at] != name) ++at;
  EXPECT_LT(at, columns.size()) << name << " not in " << header;
  std::vector<double> values;
  for (const auto& row : testing::metrics_rows(run / "metrics.csv", "epoch"))
    if (at < row.size() && !row[at].empty()) values.push_back(std::stod(row[at]));
  return values;
}

void write_uint16(const fs::path& file, const std::vector<std::uint16_t>& ids) {
  std::ofstream out(file, std::ios::binary);
  for (std::uint16_t id : ids) out.put(char(id & 0xFF)).put(char(id >> 8));
}

std::vector<std::uint16_t> random_ids(std::size_t count, int vocabulary, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint16_t> ids(count);
  for (auto& id : ids) id = std::uint16_t(rng() % unsigned(vocabulary));
  return ids;
}

// An IDX file of the Fashion-MNIST layout: big-endian magic 0x0000080N, N sizes, then bytes.
void write_idx(const fs::path& file, const std::vector<std::uint32_t>& shape, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(file, std::ios::binary);
  const auto be32 = [&](std::uint32_t v) { out.put(char(v >> 24)).put(char(v >> 16)).put(char(v >> 8)).put(char(v)); };
  be32(0x00000800u | std::uint32_t(shape.size()));
  for (std::uint32_t s : shape) be32(s);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

using Keys = std::vector<std::pair<std::string, testing::TomlValue>>;

class TransformerParity : public ExperimentFolderTest {
 protected:
  TransformerParity() : ExperimentFolderTest("transformer_parity", "") {}

  // The Python twin's losses; its initial weights are reference/init.pt.
  std::vector<double> python_losses(const std::string& model) {
    const ProcessResult r = testing::run_process(
        std::string(PLUGTRAIN_PYTHON) + " " PLUGTRAIN_SOURCE_DIR "/tests/python/transformer_reference.py " + model +
        " --data " + (dir_ / "data").string() + " --out " + (dir_ / "reference").string());
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return nlohmann::json::parse(slurp(dir_ / "reference" / "losses.json"))["losses"].get<std::vector<double>>();
  }

  // 10 epochs of one full batch each: metrics.csv's train loss per epoch is each step's loss.
  static testing::ExperimentToml parity_run(const std::string& name) {
    return testing::ExperimentToml(name)
        .on_cpu()
        .set_keys(
            "optim",
            {{"name", "adamw"}, {"lr", 1e-3}, {"betas", {0.9, 0.99}}, {"weight_decay", 0.1}, {"decay", "matrices"}})
        .set_keys("train", {{"epochs", kSteps}, {"threads", 1}, {"log_interval", 1}})
        .set("checkpoint.save", "none");
  }

  void expect_same_losses(const std::vector<double>& python, const std::string& run) {
    const std::vector<double> ours = epoch_column(dir_ / "runs" / run / "version_0", "loss");
    ASSERT_EQ(ours.size(), python.size());
    // fp32 over a few thousand terms in another summation order: a few ulps of the loss per step,
    // carried through 10 Adam steps, stays far inside llm.c's 1e-5 relative.
    for (std::size_t i = 0; i < python.size(); ++i)
      EXPECT_NEAR(ours[i], python[i], 1e-5 * std::abs(python[i])) << "step " << i;
  }
};

// The GPT takes ATen's ops one by one by default, and the fused CPU kernels
// (plugins/models/fused_ops.h) with model.fused = true: both must match nanoGPT within llm.c's 1e-5, and each other
// within what the fusions change. Per element those are a few ulps (u = 6e-8): the GELU's erf
// through ATen's 20-ulp exp polynomial (<= 3e-7 absolute), the bias gradient and the LayerNorm's
// moments summed in another order. A loss of ~4 moves by ~1e-7 relative per step from them; Adam
// divides each update by its own gradient's scale, so a relative change of the gradient moves the
// weights by the same relative amount of lr (1e-3): after 10 steps the losses differ by under
// 2e-6 relative (measured: 1.4e-7 at most), and the test allows that 2e-6.
TEST_F(TransformerParity, GptMatchesNanoGptForTenAdamWStepsInFp32) {
  fs::create_directories(dir_ / "data");
  write_uint16(dir_ / "data" / "train.bin", random_ids(kContext + kBatch, kVocab, 1));  // exactly kBatch windows
  write_uint16(dir_ / "data" / "val.bin", random_ids(3 * kContext, kVocab, 2));
  std::ofstream(dir_ / "data" / "meta.json") << "{\"vocab_size\": " << kVocab << "}";
  const std::vector<double> python = python_losses("gpt");
  for (const std::string fused : {"true", "false"}) {
    write_experiment(parity_run("gpt-fused-" + fused)
                         .set_keys("model", {{"name", "gpt"},
                                             {"layers", 2},
                                             {"heads", 2},
                                             {"width", 32},
                                             {"fused", fused == "true"},
                                             {"init", "reference/init.pt"}})
                         .set("task.name", "language_model")
                         .set_keys("data", {{"dataset", "tokens"}, {"path", "data"}, {"batch_size", kBatch}})
                         .set("dataset.context", kContext)
                         .text());
    const ProcessResult r = plugtrain("run exp.toml");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    expect_same_losses(python, "gpt-fused-" + fused);
  }
  const std::vector<double> fused = epoch_column(dir_ / "runs" / "gpt-fused-true" / "version_0", "loss");
  const std::vector<double> unfused = epoch_column(dir_ / "runs" / "gpt-fused-false" / "version_0", "loss");
  ASSERT_EQ(fused.size(), unfused.size());
  for (std::size_t i = 0; i < fused.size(); ++i)
    EXPECT_NEAR(fused[i], unfused[i], 2e-6 * std::abs(unfused[i])) << "step " << i;
}

TEST_F(TransformerParity, VitMatchesItsPythonTwinForTenAdamWStepsInFp32) {
  fs::create_directories(dir_ / "data");
  std::mt19937 rng(3);
  std::vector<std::uint8_t> pixels(std::size_t(kBatch) * 28 * 28), labels(kBatch);
  for (auto& p : pixels) p = std::uint8_t(rng() % 256);
  for (int i = 0; i < kBatch; ++i) labels[std::size_t(i)] = std::uint8_t(i % 10);
  write_idx(dir_ / "data" / "train-images-idx3-ubyte", {std::uint32_t(kBatch), 28, 28}, pixels);
  write_idx(dir_ / "data" / "train-labels-idx1-ubyte", {std::uint32_t(kBatch)}, labels);
  write_idx(dir_ / "data" / "t10k-images-idx3-ubyte", {std::uint32_t(kBatch), 28, 28}, pixels);
  write_idx(dir_ / "data" / "t10k-labels-idx1-ubyte", {std::uint32_t(kBatch)}, labels);
  const std::vector<double> python = python_losses("vit");
  write_experiment(
      parity_run("vit")
          .set_keys("model", {{"name", "vit"},
                              {"patch", 7},
                              {"width", 32},
                              {"depth", 2},
                              {"heads", 2},
                              {"mlp_ratio", 2.0},
                              {"init", "reference/init.pt"}})
          .set_keys("data",
                    {{"dataset", "fashion-mnist"}, {"path", "data"}, {"normalize", "none"}, {"batch_size", kBatch}})
          .text());
  const ProcessResult r = plugtrain("run exp.toml");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  expect_same_losses(python, "vit");
}

// examples/jargon_char_gpt.toml as shipped (nanoGPT's CPU configuration of shakespeare_char on
// the real Jargon File), cut to 3 epochs of 100 steps: it learns (val bits per character fall well
// below the uniform log2(vocabulary)), the metrics reach metrics.csv, and generation is the same
// for the same seed.
class JargonRun : public ExperimentFolderTest {
 protected:
  JargonRun() : ExperimentFolderTest("jargon_run", "") {}
  void SetUp() override {
    if (!fs::exists(testing::kJargonTextFile))
      GTEST_SKIP() << testing::kJargonTextFile << " is missing: install Debian's jargon-text (scripts/setup does)";
    ExperimentFolderTest::SetUp();
  }
};

TEST_F(JargonRun, TheShippedCharacterGptLearnsTheJargonFileAndGeneratesTheSameTextForASeed) {
  const ProcessResult r =
      plugtrain("run " + testing::shell_quote(PLUGTRAIN_SOURCE_DIR "/examples/jargon_char_gpt.toml") +
                " --set train.epochs=3 --set train.steps_per_epoch=100 --set dataset.val_windows=512"
                " --set backend.name='\"cpu\"'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const fs::path run = dir_ / "runs" / "jargon-char-gpt" / "version_0";
  const std::vector<double> bits = epoch_column(run, "val_bits_per_token");
  ASSERT_EQ(bits.size(), 3u);
  const double vocabulary = nlohmann::json::parse(slurp(run / "classes.json"))["num_classes"].get<double>();
  EXPECT_GT(vocabulary, 90);  // the Jargon File's characters: letters, digits, punctuation, some Latin-1
  EXPECT_LT(bits.back(), bits.front());
  EXPECT_LT(bits.back(), 0.7 * std::log2(vocabulary)) << "300 steps learn far more than the uniform guess";
  const std::vector<double> perplexity = epoch_column(run, "val_perplexity");
  EXPECT_NEAR(std::log2(perplexity.back()), bits.back(), 1e-4 * bits.back()) << "perplexity is 2^bits";
  // Bits per UTF-8 byte: the same bits over the val text's bytes, a few more than its characters
  // (the Jargon File's val split: 164,700 bytes for 161,876 characters, 1.3% of them Latin-1 or
  // typographic, two bytes each), so a little below bits per character, never above.
  const std::vector<double> per_byte = epoch_column(run, "val_bits_per_byte");
  ASSERT_EQ(per_byte.size(), 3u);
  EXPECT_LT(per_byte.back(), bits.back());
  EXPECT_GT(per_byte.back(), bits.back() / 1.1);

  const std::string generate =
      "generate runs/jargon-char-gpt/version_0 --prompt 'hacker ' --tokens 40 --top-k 10 --json";
  const ProcessResult once = plugtrain(generate + " --seed 7");
  ASSERT_EQ(once.exit_code, 0) << once.out;
  const nlohmann::json a = nlohmann::json::parse(testing::run_process(command(generate + " --seed 7"), false).out);
  const nlohmann::json b = nlohmann::json::parse(testing::run_process(command(generate + " --seed 7"), false).out);
  const nlohmann::json c = nlohmann::json::parse(testing::run_process(command(generate + " --seed 8"), false).out);
  EXPECT_EQ(a["tokens"].size(), 40u);
  EXPECT_EQ(a["text"], b["text"]);
  EXPECT_NE(a["tokens"], c["tokens"]);
  EXPECT_EQ(a["prompt"], "hacker ");
}

// What every run has works for a language model: a run stopped after its first epoch and
// resumed ends bitwise where the uninterrupted one does; evaluate gives the run's own last
// figures; the export loads into nanoGPT's GPT; two ddp processes train it.
class LanguageModelRun : public ExperimentFolderTest {
 protected:
  LanguageModelRun()
      : ExperimentFolderTest(
            "lm_run",
            testing::ExperimentToml("lm")
                .set("experiment.seed", 3)
                .on_cpu()
                .set_keys("model", {{"name", "gpt"}, {"layers", 1}, {"heads", 2}, {"width", 16}})
                .set("task.name", "language_model")
                .set_keys("data", {{"dataset", "tokens"}, {"path", "tok"}, {"batch_size", 8}})
                .set("dataset.context", 16)
                .set_keys("optim", {{"name", "adamw"}, {"lr", 3e-3}, {"weight_decay", 0.1}, {"decay", "matrices"}})
                .set_keys("schedule", {{"name", "cosine"}, {"warmup_steps", 5}})
                .set_keys("train", {{"epochs", 3}, {"steps_per_epoch", 20}, {"log_interval", 5}})
                .text()) {}
  void SetUp() override {
    ExperimentFolderTest::SetUp();
    fs::create_directories(dir_ / "tok");
    write_uint16(dir_ / "tok" / "train.bin", random_ids(2000, 20, 6));
    write_uint16(dir_ / "tok" / "val.bin", random_ids(300, 20, 7));
    std::ofstream(dir_ / "tok" / "meta.json") << "{\"vocab_size\": 20}";
  }
  static std::vector<std::string> epoch_rows(const fs::path& run) {
    std::vector<std::string> rows;
    for (const auto& cells : testing::metrics_rows(run / "metrics.csv", "epoch")) {
      // Every figure but the times (lr, samples_per_second and seconds: columns 7 to 9).
      std::string row;
      for (std::size_t i = 0; i < cells.size(); ++i)
        if (i < 7 || i > 9) row += cells[i] + ",";
      rows.push_back(row);
    }
    return rows;
  }
};

// bf16 autocast on the CPU: the block's float32 residual meets bf16 linear outputs, which the fused
// float32 kernels (model.fused, the default) must leave to ATen's ops rather than refuse mid-step.
TEST_F(LanguageModelRun, Bf16AutocastOnTheCpuTrainsWithTheFusedDefault) {
  const ProcessResult r = plugtrain("run exp.toml --set train.precision='\"bf16\"' --set train.epochs=1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::vector<double> bits = epoch_column(dir_ / "runs" / "lm" / "version_0", "val_bits_per_token");
  ASSERT_EQ(bits.size(), 1u);
  EXPECT_TRUE(std::isfinite(bits[0])) << r.out;
}

TEST_F(LanguageModelRun, ResumesBitwiseEvaluatesAsItRanAndExportsToNanoGpt) {
  ASSERT_EQ(plugtrain("run exp.toml").exit_code, 0);
  const ProcessResult stopped = plugtrain("run exp.toml --stop-after-epoch 1");
  ASSERT_EQ(stopped.exit_code, 0) << stopped.out;
  const ProcessResult resumed = plugtrain("run exp.toml --resume last");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  const std::vector<std::string> whole = epoch_rows(dir_ / "runs" / "lm" / "version_0");
  ASSERT_EQ(whole.size(), 3u);
  EXPECT_EQ(epoch_rows(dir_ / "runs" / "lm" / "version_1"), whole) << "stopped after epoch 1 and resumed";

  const ProcessResult evaluated =
      testing::run_process(command("evaluate runs/lm/version_0 --json"), /*merge_stderr=*/false);
  ASSERT_EQ(evaluated.exit_code, 0) << evaluated.out;
  const nlohmann::json e = nlohmann::json::parse(evaluated.out);
  const double last = epoch_column(dir_ / "runs" / "lm" / "version_0", "val_bits_per_token").back();
  // The same windows, batches and weights as the run's last evaluation; the csv keeps 6 digits.
  EXPECT_NEAR(e["metrics"]["bits_per_token"].get<double>(), last, 1e-5 * last) << evaluated.out;

  ASSERT_EQ(plugtrain("export runs/lm/version_0/checkpoints/last.ckpt w.pt").exit_code, 0);
  const ProcessResult python =
      testing::run_process("cd " + testing::shell_quote(dir_.string()) +
                           " && " PLUGTRAIN_PYTHON
                           " -c \"import sys, torch; "
                           "sys.path.insert(0, '" PLUGTRAIN_SOURCE_DIR
                           "/python'); from transformer_twins import GPT; "
                           "m = GPT(20, 16, 1, 2, 16); r = m.load_state_dict(torch.load('w.pt'), strict=False); "
                           "print('missing', r.missing_keys, 'unexpected', r.unexpected_keys)\"");
  ASSERT_EQ(python.exit_code, 0) << python.out;
  EXPECT_NE(python.out.find("missing ['lm_head.weight'] unexpected []"), std::string::npos)
      << "tied: the head is the embedding\n"
      << python.out;

  // A tokens data set without itos has no text: the prompt and the output are ids.
  const ProcessResult ids =
      testing::run_process(command("generate runs/lm/version_0 --prompt '3 1 4' --tokens 5 --json"), false);
  ASSERT_EQ(ids.exit_code, 0) << ids.out;
  const nlohmann::json g = nlohmann::json::parse(ids.out);
  ASSERT_EQ(g["tokens"].size(), 5u);
  std::string expected;
  for (const auto& id : g["tokens"]) expected += " " + std::to_string(id.get<int>());
  EXPECT_EQ(g["text"], expected);
  EXPECT_NE(plugtrain("generate runs/lm/version_0 --prompt 'x'")
                .out.find("'x' is not a token id of the run's vocabulary (0..19"),
            std::string::npos);

  const ProcessResult ddp = plugtrain("run exp.toml --set backend.devices=2 --set train.epochs=1");
  ASSERT_EQ(ddp.exit_code, 0) << ddp.out;
  EXPECT_EQ(epoch_column(dir_ / "runs" / "lm" / "version_2", "val_bits_per_token").size(), 1u);
}

// The one-line refusals, each before any training (no run folder is made).
class LanguageModelBadInput : public ExperimentFolderTest {
 protected:
  LanguageModelBadInput() : ExperimentFolderTest("lm_bad_input", "") {}
  // A one-layer GPT on the text file `path`, with these [dataset] keys and more [model] keys.
  static testing::ExperimentToml bad_run() {
    return testing::ExperimentToml("bad")
        .on_cpu()
        .set_keys("model", {{"name", "gpt"}, {"layers", 1}, {"heads", 1}, {"width", 8}})
        .set("task.name", "language_model");
  }
  ProcessResult run_text(const std::string& path, const Keys& dataset, const Keys& model = {}) {
    write_experiment(bad_run()
                         .set_keys("model", model)
                         .set_keys("data", {{"dataset", "text"}, {"path", path}, {"batch_size", 4}})
                         .set_keys("dataset", dataset)
                         .set("train.epochs", 1)
                         .text());
    return plugtrain("run exp.toml");
  }
  void expect_refused(const ProcessResult& r, const std::string& part) {
    EXPECT_NE(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find(part), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(dir_ / "runs" / "bad" / "version_0" / "metrics.csv")) << "refused before training";
  }
};

TEST_F(LanguageModelBadInput, BinaryEmptyAndShortTextsAreRefusedNamingTheFile) {
  std::ofstream(dir_ / "binary.txt", std::ios::binary) << std::string("abc\0\x01\x02", 6);
  expect_refused(run_text("binary.txt", {{"context", 2}}), "'binary.txt' is not UTF-8 text (byte 0x00 at offset 3)");
  std::ofstream(dir_ / "empty.txt");
  expect_refused(run_text("empty.txt", {{"context", 2}}), "'empty.txt' is empty");
  std::ofstream(dir_ / "short.txt") << std::string(300, 'a');
  expect_refused(run_text("short.txt", {{"context", 32}, {"val_fraction", 0.1}}),
                 "the val split has 30 tokens, fewer than one window of [dataset] context = 32");
}

TEST_F(LanguageModelBadInput, AContextLongerThanTheModelsIsRefused) {
  std::ofstream(dir_ / "text.txt") << std::string(500, 'x') + "yz";
  expect_refused(run_text("text.txt", {{"context", 16}}, {{"context", 8}}),
                 "gpt: the data's windows have 16 tokens, more than model.context = 8");
}

TEST_F(LanguageModelBadInput, ATokenIdOutsideTheVocabularyIsRefusedWithItsPosition) {
  fs::create_directories(dir_ / "tok");
  std::vector<std::uint16_t> ids = random_ids(64, 10, 4);
  ids[37] = 10;
  write_uint16(dir_ / "tok" / "train.bin", ids);
  write_uint16(dir_ / "tok" / "val.bin", random_ids(64, 10, 5));
  std::ofstream(dir_ / "tok" / "meta.json") << "{\"vocab_size\": 10}";
  write_experiment(bad_run()
                       .unset("backend")
                       .set_keys("data", {{"dataset", "tokens"}, {"path", "tok"}, {"batch_size", 4}})
                       .set("dataset.context", 8)
                       .text());
  expect_refused(plugtrain("run exp.toml"),
                 "train.bin': token id 10 at position 37 is at or above the vocabulary size 10");
}

TEST_F(LanguageModelBadInput, GenerateOnAnImageRunSaysItIsNotALanguageModel) {
  write_experiment(
      testing::ExperimentToml("img")
          .set_keys("model", {{"name", "mlp"}, {"hidden", {8}}})
          .set_keys(
              "data",
              {{"dataset", "synthetic"}, {"synthetic_train_size", 64}, {"synthetic_test_size", 16}, {"batch_size", 32}})
          .set("train.epochs", 1)
          .text());
  ASSERT_EQ(plugtrain("run exp.toml").exit_code, 0);
  const ProcessResult r = plugtrain("generate runs/img/version_0 --tokens 5");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("not a language model's run (its samples are not token ids)"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace plugtrain
