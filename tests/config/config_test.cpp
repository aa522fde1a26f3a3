// Experiment files: every kind of bad input gives one line naming where, and --set works.
// ctest-label: unit
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "config/config_error.h"
#include "config/experiment_loader.h"
#include "config/experiment_schema.h"
#include "config/optimizer_table.h"
#include "config/resolved_experiment.h"
#include "plugtrain/model.h"

namespace plugtrain {
namespace config_test {

namespace fs = std::filesystem;

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("plugtrain-config-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& text) {
    fs::path p = dir_ / "exp.toml";
    std::ofstream(p) << text;
    return p;
  }
  // The ConfigError message for this file (and overrides), or "" when it is accepted.
  std::string error_of(const std::string& text, std::vector<std::string> overrides = {}) {
    try {
      ExperimentFile f = parse_experiment_file(write(text));
      for (const auto& o : overrides) apply_override(f, o);
      resolve_experiment(f);
      return "";
    } catch (const ConfigError& e) { return e.what(); }
  }
  std::string file() const { return (dir_ / "exp.toml").string(); }
  fs::path dir_;
};

const std::string kMinimal = "[model]\nname = \"mlp\"\n";

TEST_F(ConfigTest, MinimalFileTakesEveryDefault) {
  ExperimentFile f = parse_experiment_file(write(kMinimal));
  Experiment e = resolve_experiment(f);
  EXPECT_EQ(e.model.name, "mlp");
  EXPECT_EQ(e.data.batch_size, 100);
  EXPECT_EQ(e.optim.name, OptimizerName::adam);
  EXPECT_DOUBLE_EQ(e.optim.lr, 1e-3);
  EXPECT_TRUE(e.backend.prefer.empty()) << "by default, the order is the backends' own priorities";
  EXPECT_EQ(e.data.path, "/usr/share/datasets/fashion-mnist");
}

TEST_F(ConfigTest, SyntaxErrorNamesFileLineAndColumn) {
  const std::string msg = error_of(kMinimal + "[optim]\nlr = = 3\n");
  EXPECT_EQ(msg.rfind(file() + ":4:", 0), 0u) << msg;
  EXPECT_NE(msg.find("TOML syntax error"), std::string::npos) << msg;
}

// Found by scripts/fuzz experiment: strings with quotes, backslashes or control characters
// must survive the resolved record (experiment.toml, checkpoints) and read back as they were.
TEST_F(ConfigTest, TheResolvedRecordReadsBackWhateverTheStrings) {
  const std::string odd = "a \"quoted\" \\ name\x01\x7F\u00e9";
  ExperimentFile f = parse_experiment_text(kMinimal, "exp.toml");
  Experiment e = resolve_experiment(f);
  e.experiment.name = "a \"quoted\" name";
  e.data.path = odd;
  const std::string record = resolved_toml(e);
  const Experiment again = resolve_experiment(parse_experiment_text(record, "record"));
  EXPECT_EQ(again.experiment.name, "a \"quoted\" name");
  EXPECT_EQ(again.data.path, odd);
  EXPECT_TRUE(resume_compatible(record, record).ok());
}

TEST_F(ConfigTest, MissingFileIsNamed) {
  try {
    parse_experiment_file(dir_ / "nope.toml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("nope.toml: no such experiment file"), std::string::npos) << e.what();
  }
}

TEST_F(ConfigTest, UnknownKeySuggestsTheClosest) {
  EXPECT_EQ(error_of(kMinimal + "[optim]\nlrr = 0.1\n"),
            file() + ":4:1: unknown key 'optim.lrr' (did you mean 'optim.lr'?)");
}

TEST_F(ConfigTest, UnknownTableSuggestsTheClosest) {
  const std::string msg = error_of(kMinimal + "[optimizer]\nlr = 0.1\n");
  EXPECT_NE(msg.find("unknown table [optimizer]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(did you mean 'optim'?)"), std::string::npos) << msg;
  EXPECT_EQ(msg.rfind(file() + ":3:", 0), 0u) << msg;
}

TEST_F(ConfigTest, WrongTypeNamesExpectedAndActual) {
  EXPECT_EQ(error_of(kMinimal + "[data]\nbatch_size = \"big\"\n"),
            file() + ":4:14: data.batch_size must be an integer or \"auto\", got string");
  EXPECT_EQ(error_of(kMinimal + "[data]\nbatch_size = 1.5\n"),
            file() + ":4:14: data.batch_size must be an integer or \"auto\", got float");
}

TEST_F(ConfigTest, OutOfRangeValues) {
  EXPECT_EQ(error_of(kMinimal + "[optim]\nlr = 0\n"), file() + ":4:6: optim.lr must be > 0");
  EXPECT_EQ(error_of(kMinimal + "[optim]\nlr = -0.1\n"), file() + ":4:6: optim.lr must be > 0");
  EXPECT_EQ(error_of(kMinimal + "[data]\nbatch_size = 0\n"),
            file() + ":4:14: data.batch_size must be >= 1 or \"auto\"");
  EXPECT_EQ(error_of(kMinimal + "[backend]\ndevices = 0\n"),
            file() + ":4:11: backend.devices must be >= 1 or \"auto\"");
  EXPECT_EQ(error_of(kMinimal + "[data]\nlabel_noise = 1.5\n"), file() + ":4:15: data.label_noise must be in [0, 1]");
  EXPECT_EQ(error_of(kMinimal + "[data]\nlabel_noise = -0.1\n"), file() + ":4:15: data.label_noise must be in [0, 1]");
  EXPECT_NE(error_of(kMinimal + "[optim]\nname = \"adagrad\"\n").find("'adagrad' is not one of"), std::string::npos);
}

TEST_F(ConfigTest, IntegerIsAcceptedWhereAFloatIsExpected) {
  ExperimentFile f = parse_experiment_file(write(kMinimal + "[optim]\nlr = 1\n"));
  EXPECT_DOUBLE_EQ(resolve_experiment(f).optim.lr, 1.0);
}

TEST_F(ConfigTest, ModelNameIsRequired) {
  EXPECT_EQ(error_of("[optim]\nlr = 0.1\n"), file() + ": [model] name is required (see `plugtrain models`)");
}

TEST_F(ConfigTest, NesterovNeedsMomentum) {
  EXPECT_EQ(error_of(kMinimal + "[optim]\nname = \"sgd\"\nnesterov = true\n"),
            file() + ":5:12: optim.nesterov needs optim.momentum > 0");
}

TEST_F(ConfigTest, SetOverridesAreTypedLikeToml) {
  ExperimentFile f = parse_experiment_file(write(kMinimal + "[optim]\nlr = 0.5\n"));
  apply_override(f, "optim.lr=0.01");
  apply_override(f, "data.batch_size=64");
  apply_override(f, "data.augmentation=[\"horizontal_flip\"]");
  apply_override(f, "model.name=convnet");  // bare word: a string
  apply_override(f, "train.epochs=3");      // a table the file does not have
  Experiment e = resolve_experiment(f);
  EXPECT_DOUBLE_EQ(e.optim.lr, 0.01);
  EXPECT_EQ(e.data.batch_size, 64);
  EXPECT_EQ(e.data.augment.order, std::vector<Augmentation>{Augmentation::horizontal_flip});
  EXPECT_EQ(e.model.name, "convnet");
  EXPECT_EQ(e.train.epochs, 3);
}

TEST_F(ConfigTest, BadSetValuesNameTheOverride) {
  EXPECT_EQ(error_of(kMinimal, {"optim.lr=-1"}), "--set optim.lr: optim.lr must be > 0");
  EXPECT_EQ(error_of(kMinimal, {"optim.lrr=1"}), "--set optim.lrr: unknown key 'optim.lrr' (did you mean 'optim.lr'?)");
  EXPECT_EQ(error_of(kMinimal, {"train.epochs=99999999999999999999999"}),
            "--set train.epochs: 99999999999999999999999 is not a valid number: Error while parsing decimal integer: "
            "'99999999999999999999999' is not representable in 64 bits");
  EXPECT_EQ(error_of(kMinimal, {"data.path=2024-01_runs"}), "") << "a path starting with digits is a string";
  EXPECT_EQ(error_of(kMinimal, {"data.batch_size=abc"}),
            "--set data.batch_size: data.batch_size must be an integer or \"auto\", got string");
  EXPECT_NE(error_of(kMinimal, {"lr"}).find("expected key.path=value"), std::string::npos);
  EXPECT_NE(error_of(kMinimal, {"lr=3"}).find("the key needs its table"), std::string::npos);
}

ModelSpec fake_mlp_spec() {
  ModelSpec spec;
  spec.name = "mlp";
  spec.options = {{"hidden", OptionType::integer_list, std::vector<std::int64_t>{256, 128}, "widths"},
                  {"dropout", OptionType::real, 0.0, "dropout"},
                  {"activation", OptionType::string, std::string("relu"), "activation"}};
  return spec;
}

TEST_F(ConfigTest, ModelOptionsAreCheckedAgainstTheModelsSchema) {
  ExperimentFile f = parse_experiment_file(write("[model]\nname = \"mlp\"\nhidden = [64]\n"));
  Options o = resolve_model_options(f, fake_mlp_spec());
  EXPECT_EQ(o.integers("hidden"), std::vector<std::int64_t>{64});
  EXPECT_DOUBLE_EQ(o.real("dropout"), 0.0);  // default filled in
  EXPECT_EQ(o.string("activation"), "relu");

  ExperimentFile bad = parse_experiment_file(write("[model]\nname = \"mlp\"\nhiden = [64]\n"));
  try {
    resolve_model_options(bad, fake_mlp_spec());
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), file() +
                                         ":3:1: model 'mlp' has no option 'hiden' (did you mean 'hidden'?); "
                                         "its options: hidden, dropout, activation");
  }
  ExperimentFile wrong = parse_experiment_file(write("[model]\nname = \"mlp\"\ndropout = \"lots\"\n"));
  EXPECT_THROW(resolve_model_options(wrong, fake_mlp_spec()), ConfigError);
}

TEST(ExperimentDocs, EveryKeyIsDocumented) {
  std::ifstream in(PLUGTRAIN_SOURCE_DIR "/docs/experiment.md");
  std::stringstream docs;
  docs << in.rdbuf();
  for (const auto& k : experiment_schema())
    EXPECT_NE(docs.str().find("`" + k.path + "`"), std::string::npos) << k.path << " missing from docs/experiment.md";
}

TEST(ExperimentDocs, TheOptimizerTableIsTheOneTheCodeDeclares) {
  std::ifstream in(PLUGTRAIN_SOURCE_DIR "/docs/experiment.md");
  std::stringstream docs;
  docs << in.rdbuf();
  EXPECT_NE(docs.str().find(optimizer_docs_table()), std::string::npos)
      << "docs/experiment.md should hold config/optimizer_table.cpp's table:\n"
      << optimizer_docs_table();
}

}  // namespace config_test
}  // namespace plugtrain
