// The tests' experiment builder (support/experiment_toml.h) writes TOML that the experiment
// loader reads back as the values the test set: typed, quoted, in the tables it named.
// ctest-label: unit
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/experiment_loader.h"
#include "support/experiment_toml.h"
#include "support/synthetic_experiment.h"

namespace plugtrain {
namespace experiment_toml_test {

using ::testing::ElementsAre;
using testing::ExperimentToml;
using testing::TomlValue;

Experiment resolved(const ExperimentToml& toml) {
  return resolve_experiment(parse_experiment_text(toml.text(), "exp.toml"));
}
toml::table parsed(const ExperimentToml& toml) { return parse_experiment_text(toml.text(), "exp.toml").table; }

TEST(ExperimentToml, TheSyntheticPresetIsTheSmallClassificationRun) {
  const Experiment e = resolved(ExperimentToml::synthetic("small"));
  EXPECT_EQ(e.experiment.name, "small");
  EXPECT_EQ(e.experiment.seed, 7);
  EXPECT_EQ(e.model.name, "mlp");
  EXPECT_THAT(e.data.synthetic_shape, ElementsAre(1, 8, 8));
  EXPECT_EQ(e.data.synthetic_classes, 4);
  EXPECT_EQ(e.data.synthetic_train_size, 800);
  EXPECT_EQ(e.data.synthetic_test_size, 200);
  EXPECT_EQ(e.data.batch_size, 50);
  EXPECT_EQ(e.optim.name, OptimizerName::sgd);
  EXPECT_DOUBLE_EQ(e.optim.lr, 0.1);
  EXPECT_DOUBLE_EQ(e.optim.momentum, 0.9);
  EXPECT_EQ(e.train.epochs, 3);
  EXPECT_EQ(e.train.log_interval, 0);
  EXPECT_EQ(testing::synthetic_experiment("small"), ExperimentToml::synthetic("small").text());
}

TEST(ExperimentToml, SetReplacesAKeyInPlaceAndAddsNewTablesLast) {
  const ExperimentToml toml =
      ExperimentToml::synthetic("grid").set("optim.lr", 0.5).on_cpu().set("data.batch_size", 25);
  const Experiment e = resolved(toml);
  EXPECT_DOUBLE_EQ(e.optim.lr, 0.5);
  EXPECT_EQ(e.backend.name, "cpu");
  EXPECT_EQ(e.data.batch_size, 25);
  const std::string text = toml.text();
  EXPECT_LT(text.find("lr = 0.5"), text.find("momentum = 0.9")) << "a key set again stays where it was:\n" << text;
  EXPECT_GT(text.find("[backend]"), text.find("[train]")) << "a new table comes last:\n" << text;
}

TEST(ExperimentToml, UnsetDropsAKeyOrAWholeTableSoTheRunTakesItsDefault) {
  const Experiment e = resolved(ExperimentToml::synthetic("plain").unset("optim.momentum").unset("train"));
  EXPECT_DOUBLE_EQ(e.optim.momentum, 0.0);
  EXPECT_EQ(e.train.epochs, TrainConfig{}.epochs);
  EXPECT_EQ(e.train.log_interval, TrainConfig{}.log_interval);
  EXPECT_DOUBLE_EQ(e.optim.lr, 0.1) << "the rest of [optim] stays";
}

TEST(ExperimentToml, ValuesAreTypedAsTheTestWroteThem) {
  const toml::table t = parsed(ExperimentToml("typed")
                                   .set("model.hidden", {64, 32})
                                   .set("model.dropout", 0.0)
                                   .set("model.activation", "relu")
                                   .set("train.epochs", 2)
                                   .set("data.pin_memory", false)
                                   .set("optim.lr", 1e-5)
                                   .set("backend.prefer", {"cuda", "cpu"}));
  EXPECT_EQ(t.at_path("model.hidden").as_array()->size(), 2u);
  EXPECT_EQ(t.at_path("model.hidden[1]").value<std::int64_t>(), 32);
  ASSERT_TRUE(t.at_path("model.dropout").is_floating_point()) << "0.0 stays a float, not the integer 0";
  EXPECT_EQ(t.at_path("model.dropout").value<double>(), 0.0);
  EXPECT_EQ(t.at_path("model.activation").value<std::string>(), "relu");
  ASSERT_TRUE(t.at_path("train.epochs").is_integer());
  EXPECT_EQ(t.at_path("data.pin_memory").value<bool>(), false);
  EXPECT_EQ(t.at_path("optim.lr").value<double>(), 1e-5);
  EXPECT_EQ(t.at_path("backend.prefer[1]").value<std::string>(), "cpu");
}

TEST(ExperimentToml, StringsAreQuotedAndEscapedSoAnyTextReadsBack) {
  const std::string path = "C:\\data\\\"fashion\"\nmnist\t\x01";
  const toml::table t = parsed(ExperimentToml("paths").set("data.path", path));
  EXPECT_EQ(t.at_path("data.path").value<std::string>(), path);
}

TEST(ExperimentToml, SweepKeysAreDottedAndNestedTablesAreNamedWhole) {
  const ExperimentToml toml = ExperimentToml::synthetic("sweep")
                                  .set("sweep.optim.name", {"sgd", "adam"})
                                  .set("sweep.\"experiment.seed\"", {1, 2})
                                  .set("sweep.optim.lr", TomlValue::table({{"log_uniform", {1e-4, 0.1}}}))
                                  .set_in("sweep.when.\"optim.name=sgd\"", "optim.lr", 0.1);
  const toml::table t = parsed(toml);
  const toml::table& sweep = *t["sweep"].as_table();
  EXPECT_EQ(sweep.at_path("optim.name[1]").value<std::string>(), "adam");
  EXPECT_EQ(sweep["experiment.seed"][1].value<std::int64_t>(), 2) << "a quoted key keeps its dot";
  EXPECT_EQ(sweep.at_path("optim.lr.log_uniform[0]").value<double>(), 1e-4);
  EXPECT_EQ(sweep["when"]["optim.name=sgd"]["optim"]["lr"].value<double>(), 0.1);
  const toml::table without = parsed(ExperimentToml(toml).unset("sweep.when.\"optim.name=sgd\""));
  EXPECT_FALSE(without["sweep"]["when"]) << "a nested table goes by its whole name";
  EXPECT_TRUE(without["sweep"]["optim"]["name"]) << "and [sweep] stays";
}

TEST(ExperimentToml, AnEmptyTableIsWrittenAndRawTextIsWrittenAsGiven) {
  const ExperimentToml toml = ExperimentToml("raw").table("dataset").set("model.hidden", TomlValue::raw("[ 8 ]"));
  const toml::table t = parsed(toml);
  EXPECT_TRUE(t["dataset"].is_table());
  EXPECT_EQ(t.at_path("model.hidden[0]").value<std::int64_t>(), 8);
  EXPECT_NE(toml.text().find("hidden = [ 8 ]"), std::string::npos) << toml.text();
}

TEST(ExperimentToml, SetKeysSetsSeveralKeysOfOneTable) {
  const Experiment e = resolved(ExperimentToml::synthetic("keys").set_keys(
      "data", {{"synthetic_classes", 6}, {"synthetic_shape", {3, 8, 8}}, {"test_batch_size", 100}}));
  EXPECT_EQ(e.data.synthetic_classes, 6);
  EXPECT_THAT(e.data.synthetic_shape, ElementsAre(3, 8, 8));
  EXPECT_EQ(e.data.test_batch_size, 100);
  EXPECT_EQ(e.data.batch_size, 50) << "the table's other keys stay";
}

TEST(ExperimentToml, AKeyWithoutItsTableIsRefusedWhenItIsSet) {
  EXPECT_THROW(ExperimentToml("bad").set("epochs", 3), std::invalid_argument);
}

}  // namespace experiment_toml_test
}  // namespace plugtrain
