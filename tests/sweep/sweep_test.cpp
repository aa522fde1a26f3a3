// Sweeps as a user runs them: a grid of trials, statistics that match the trials' own
// summaries, resuming after Ctrl-C, a failing trial, random search, up-front validation, one
// sweep per folder, and TensorBoard's hparams read back by the real TensorBoard.
// ctest-label: unit
// ctest-label SweepTest: slow
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/experiment_toml.h"
#include "support/run_process.h"
#include "support/temp_dir.h"
#include "sweep/sweep_report.h"
#include "sweep/sweep_spec.h"
#include "util/error.h"

namespace plugtrain {
namespace sweep_test {

using ::testing::HasSubstr;
using testing::run_process;
using testing::shell_quote;
using testing::slurp;
namespace fs = std::filesystem;

// 2 optimizers x 3 seeds on a small synthetic set.
// On the CPU, which runs --jobs 2 on any machine (a GPU machine's one GPU takes one trial).
const testing::ExperimentToml kGrid = testing::ExperimentToml::synthetic("grid")
                                          .unset("experiment.seed")
                                          .on_cpu()
                                          .set("model.hidden", {16})
                                          .set("data.synthetic_train_size", 600)
                                          .set("data.batch_size", 30)
                                          .unset("optim")
                                          .set("sweep.optim.name", {"sgd", "adam"})
                                          .set("sweep.\"experiment.seed\"", {1, 2, 3})
                                          .set_in("sweep.when.\"optim.name=sgd\"", "optim.lr", 0.1);

class SweepTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::scratch_dir("sweep"); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }
  fs::path write(const std::string& name, const testing::ExperimentToml& experiment) {
    return experiment.write(dir_ / name);
  }
  std::string plugtrain(const std::string& args) const { return testing::plugtrain_command(args, "", dir_); }
  testing::ProcessResult run(const std::string& args) { return run_process(plugtrain(args)); }
  fs::path sweep_folder(const std::string& name = "grid") const { return dir_ / "runs" / name / "sweep"; }
  // Epoch rows of a trial's metrics.csv: epoch number -> how many rows.
  std::map<int, int> epoch_rows(const fs::path& trial) {
    std::map<int, int> rows;
    std::ifstream in(trial / "version_0" / "metrics.csv");
    for (std::string line; std::getline(in, line);)
      if (line.rfind("epoch,", 0) == 0) ++rows[std::stoi(line.substr(6))];
    return rows;
  }
  fs::path dir_;
};

TEST_F(SweepTest, AGridOfTwoByThreeTrainsSixTrialsAndItsStatisticsAreTheTrialsOwn) {
  write("grid.toml", kGrid);
  auto r = run("sweep grid.toml --jobs 2");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("sweep: 6 trials (grid)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("6 of 6 trials finished, 0 failed"), std::string::npos) << r.out;
  for (const char* f : {"sweep.md", "sweep.csv", "sweep.svg"}) EXPECT_TRUE(fs::exists(sweep_folder() / f)) << f;
  EXPECT_TRUE(fs::exists(sweep_folder() / "optim.name=sgd,experiment.seed=2" / "version_0" / "experiment.toml"));
  EXPECT_NE(
      slurp(sweep_folder() / "optim.name=sgd,experiment.seed=2" / "version_0" / "experiment.toml").find("lr = 0.1"),
      std::string::npos)
      << "the when-override reached the trial";

  // The group statistics against the trials' own summary.json files.
  std::map<std::string, std::vector<double>> final_accuracy;
  for (const auto& trial : fs::directory_iterator(sweep_folder())) {
    if (!fs::exists(trial.path() / "version_0" / "summary.json")) continue;
    const auto s = nlohmann::json::parse(std::ifstream(trial.path() / "version_0" / "summary.json"));
    const std::string name = trial.path().filename().string();
    final_accuracy[name.substr(0, name.find(','))].push_back(s["final_test_accuracy"].get<double>());
  }
  ASSERT_EQ(final_accuracy.size(), 2u);
  const SweepReport report = build_report(sweep_folder());
  ASSERT_EQ(report.groups.size(), 2u);
  EXPECT_EQ(report.varied, (std::vector<std::string>{"experiment.seed", "optim.name", "optim.lr"}));
  for (const RunGroup& g : report.groups) {
    const std::string key = g.label.rfind("optim.name=sgd", 0) == 0 ? "optim.name=sgd" : "optim.name=adam";
    const MeanStd expected = mean_std(final_accuracy[key]);
    EXPECT_EQ(g.runs.size(), 3u) << g.label;
    EXPECT_NEAR(g.final_metric.mean, expected.mean, 1e-12) << g.label;
    EXPECT_NEAR(g.final_metric.std, expected.std, 1e-12) << g.label;
  }
  EXPECT_GE(report.groups[0].final_metric.mean, report.groups[1].final_metric.mean) << "best first";
  EXPECT_NE(slurp(sweep_folder() / "sweep.md").find("| " + report.groups[0].label + " | 3 |"), std::string::npos);

  // Running it again trains nothing; `plugtrain report` rebuilds the same table.
  auto again = run("sweep grid.toml");
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_NE(again.out.find("sweep: 6 trials already finished"), std::string::npos) << again.out;
  const std::string md = slurp(sweep_folder() / "sweep.md");
  ASSERT_EQ(run("report runs/grid/sweep").exit_code, 0);
  EXPECT_EQ(slurp(sweep_folder() / "sweep.md"), md);
}

// The task's own headline metric, in its own direction: a regression sweep ranks its groups by
// mean absolute error, lowest first, and says so in every file of the report.
TEST_F(SweepTest, ARegressionSweepRanksByItsErrorLowestFirst) {
  write("reg.toml", testing::ExperimentToml::synthetic("reg")
                        .unset("experiment.seed")
                        .on_cpu()
                        .set("task.name", "regression")
                        .set("model.hidden", {16})
                        .unset("data.synthetic_classes")
                        .set("data.synthetic_train_size", 400)
                        .set("data.synthetic_test_size", 100)
                        .set("data.batch_size", 40)
                        .unset("optim")
                        .set("train.epochs", 2)
                        .set("sweep.optim.lr", {0.00001, 0.01}));
  auto r = run("sweep reg.toml --jobs 2");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string md = slurp(sweep_folder("reg") / "sweep.md");
  EXPECT_NE(md.find("best first by test mae (lower is better)"), std::string::npos) << md;
  EXPECT_NE(md.find("| final test mae | best test mae |"), std::string::npos) << md;
  EXPECT_EQ(slurp(sweep_folder("reg") / "sweep.csv").rfind("run,optim.lr,final_test_mae,best_test_mae,", 0), 0u)
      << slurp(sweep_folder("reg") / "sweep.csv");
  EXPECT_NE(slurp(sweep_folder("reg") / "sweep.svg").find("test mae by epoch"), std::string::npos);
  const SweepReport report = build_report(sweep_folder("reg"));
  ASSERT_EQ(report.groups.size(), 2u);
  EXPECT_EQ(report.metric, "mae");
  EXPECT_FALSE(report.higher_is_better);
  EXPECT_LT(report.groups[0].final_metric.mean, report.groups[1].final_metric.mean) << "the lowest error first";
  EXPECT_EQ(report.groups[0].label, "optim.lr=0.01") << md;
}

// Runs written before summary.json named the metric's direction rank by their task's own
// metric; runs of different headline metrics are not ranked together.
TEST(SweepReportTest, OldRunsRankByTheirTasksDirectionAndMixedMetricsAreRefused) {
  testing::TempDir dir;
  auto write_run = [&](const std::string& name, const std::string& summary) {
    fs::create_directories(dir.path() / name / "version_0");
    std::ofstream(dir.path() / name / "version_0" / "summary.json") << summary;
  };
  write_run("a", R"({"task": "regression", "metric": "mae", "final_test_mae": 2.0, "best_test_mae": 1.5})");
  write_run("b", R"({"task": "regression", "metric": "mae", "final_test_mae": 1.0, "best_test_mae": 0.5})");
  const SweepReport report = build_report(dir.path());
  EXPECT_EQ(report.metric, "mae");
  EXPECT_FALSE(report.higher_is_better);
  ASSERT_EQ(report.runs.size(), 2u);
  write_run("c", R"({"task": "classification", "metric": "accuracy", "final_test_accuracy": 0.9})");
  try {
    build_report(dir.path());
    ADD_FAILURE() << "accuracy and mae were ranked together";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("have different headline metrics (mae in "), std::string::npos) << e.what();
  }
}

// Trials of a data set without test labels (tiny-imagenet): the report says its "final test"
// figures are on the val split that chose.
TEST(SweepReportTest, TestFiguresOnTheValSplitThatChoseAreSaidSo) {
  testing::TempDir dir;
  for (const char* name : {"a", "b"}) {
    fs::create_directories(dir.path() / name / "version_0");
    std::ofstream(dir.path() / name / "version_0" / "summary.json")
        << R"({"task": "classification", "metric": "accuracy", "selection_split": "val", "test_is_val": true, )"
        << R"("final_test_accuracy": 0.5, "final_val_accuracy": 0.5, "best_val_accuracy": 0.6})";
  }
  std::ostringstream out;
  write_report(build_report(dir.path()), dir.path(), out);
  EXPECT_NE(out.str().find("The data set has no labelled test split: the \"final test\" metrics are on the val split "
                           "that chose"),
            std::string::npos)
      << out.str();
}

// Language models of different vocabularies: their bits per token do not compare, their bits per
// byte do, so the report gives them beside the headline (sweep.md and sweep.csv).
TEST(SweepReportTest, LanguageModelsGiveBitsPerByteBesideTheirHeadline) {
  testing::TempDir dir;
  const std::vector<std::pair<std::string, double>> runs = {{"char", 2.82}, {"bpe", 2.35}};
  for (const auto& [name, per_byte] : runs) {
    fs::create_directories(dir.path() / name / "version_0");
    std::ofstream(dir.path() / name / "version_0" / "summary.json")
        << nlohmann::json{{"task", "language_model"},        {"metric", "bits_per_token"},
                          {"metric_direction", "min"},       {"final_test_bits_per_token", per_byte * 2.5},
                          {"best_test_bits_per_token", 1.0}, {"final_test", {{"bits_per_byte", per_byte}}}}
               .dump();
  }
  std::ostringstream out;
  write_report(build_report(dir.path()), dir.path(), out);
  std::vector<std::vector<std::string>> rows;  // sweep.csv's cells (no run name here holds a comma)
  std::istringstream csv(slurp(dir.path() / "sweep.csv"));
  for (std::string line; std::getline(csv, line);) {
    rows.emplace_back();
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) rows.back().push_back(cell);
  }
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0][2], "final_test_bits_per_byte");
  std::map<std::string, double> per_byte;
  for (std::size_t i = 1; i < rows.size(); ++i) per_byte[rows[i][0]] = std::stod(rows[i][2]);
  EXPECT_DOUBLE_EQ(per_byte["bpe/version_0"], 2.35);
  EXPECT_DOUBLE_EQ(per_byte["char/version_0"], 2.82);
}

TEST(WelchTest, MatchesAKnownValue) {
  // Welch's t = -2.6112 with 6.98 degrees of freedom: two-sided p = 0.034939 (the t density
  // integrated numerically; scipy.stats.ttest_ind(a, b, equal_var=False) gives the same).
  const auto p = welch_p_value({1, 2, 3, 4}, {3, 4, 5, 6, 7});
  ASSERT_TRUE(p.has_value());
  EXPECT_NEAR(*p, 0.034939, 1e-5);
  EXPECT_FALSE(welch_p_value({1.0}, {2.0, 3.0}).has_value()) << "one value has no spread";
  const MeanStd m = mean_std({1, 2, 3, 4});
  EXPECT_DOUBLE_EQ(m.mean, 2.5);
  EXPECT_NEAR(m.std, 1.2909944, 1e-6) << "sample std (n - 1)";
}

TEST_F(SweepTest, AnInterruptedSweepResumedTrainsEveryTrialExactlyItsEpochs) {
  write("grid.toml", kGrid);
  const std::string longer = " --set data.synthetic_train_size=60000 --set train.epochs=4";
  const fs::path log = dir_ / "sweep.log";
  const int pid = std::stoi(
      run_process(
          plugtrain("sweep grid.toml --jobs 2" + longer) + " > " + shell_quote(log.string()) + " 2>&1 & echo $!", false)
          .out);
  // Stop it while its first trials are in their second epoch.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  const fs::path first = sweep_folder() / "optim.name=sgd,experiment.seed=1";
  while (epoch_rows(first).empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  while (::kill(pid, 0) == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const std::string interrupted = slurp(log);
  EXPECT_NE(interrupted.find("interrupted (its checkpoint resumes it)"), std::string::npos) << interrupted;
  EXPECT_NE(interrupted.find("run the same command again to resume"), std::string::npos) << interrupted;

  auto resumed = run("sweep grid.toml --jobs 2" + longer);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  EXPECT_NE(resumed.out.find("6 of 6 trials finished"), std::string::npos) << resumed.out;
  for (const auto& trial : fs::directory_iterator(sweep_folder())) {
    if (!fs::is_directory(trial.path() / "version_0")) continue;
    EXPECT_EQ(epoch_rows(trial.path()), (std::map<int, int>{{1, 1}, {2, 1}, {3, 1}, {4, 1}})) << trial.path();
    EXPECT_FALSE(fs::exists(trial.path() / "version_1")) << "a resumed trial continues its own folder";
  }
}

TEST_F(SweepTest, AFailingTrialIsReportedAndTheOthersFinish) {
  write("not-weights.pt", "this is not a torch.save file");
  write("fails.toml", testing::ExperimentToml(kGrid)
                          .unset("sweep")
                          .unset("sweep.when.\"optim.name=sgd\"")
                          .set("sweep.model.init", {"", "not-weights.pt"})
                          .set("sweep.repeat_seeds", {1}));
  auto r = run("sweep fails.toml");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("FAILED: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 of 2 trials finished, 1 failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("plugtrain: error: 1 trial(s) failed: trial 2 (model.init=not-weights.pt"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("not-weights.pt"), std::string::npos) << r.out;
  // --status names the failed trial with its reason, and exits 1.
  auto status = run_process(plugtrain("sweep --status runs/grid --json"), false);
  EXPECT_EQ(status.exit_code, 1) << status.out;
  const nlohmann::json j = nlohmann::json::parse(status.out);
  ASSERT_EQ(j.at("trials").size(), 2u) << j.dump(2);
  const nlohmann::json& failed = j["trials"][1];
  EXPECT_EQ(failed.at("state"), "failed");
  EXPECT_THAT(failed.at("overrides").get<std::string>(), HasSubstr("model.init=not-weights.pt"));
  EXPECT_THAT(failed.at("detail").get<std::string>(), HasSubstr("not-weights.pt"));
  EXPECT_EQ(j.at("counts"), nlohmann::json({{"failed", 1}, {"finished", 1}}));
}

// Diverged trials fail with their reason (train.on_nonfinite = "stop"); the others still make a
// well-formed report.
TEST_F(SweepTest, ADivergedTrialAndListValuesStillGiveAWellFormedReport) {
  write("diverge.toml", testing::ExperimentToml(kGrid)
                            .unset("sweep")
                            .unset("sweep.when.\"optim.name=sgd\"")
                            .set("sweep.model.hidden", {{16}, {16, 8}})
                            .set("sweep.optim.lr", {0.01, 1e30}));  // 1e30: the loss becomes NaN
  auto r = run("sweep diverge.toml");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("2 of 4 trials finished, 2 failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("optim.lr=1e+30): the loss is nan at step"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("## Groups"), std::string::npos) << r.out;
  // Every CSV row has as many cells as the header once quoted cells ("[16, 8]") are read as one.
  std::ifstream csv(sweep_folder() / "sweep.csv");
  auto cells = [](const std::string& line) {
    int n = 1;
    bool quoted = false;
    for (char c : line) {
      if (c == '"') quoted = !quoted;
      n += c == ',' && !quoted;
    }
    return n;
  };
  std::string header;
  std::getline(csv, header);
  int rows = 0;
  for (std::string line; std::getline(csv, line); ++rows) EXPECT_EQ(cells(line), cells(header)) << line;
  EXPECT_EQ(rows, 2);
  EXPECT_NE(slurp(sweep_folder() / "sweep.csv").find("\"[16, 8]\""), std::string::npos);
}

TEST_F(SweepTest, RandomSearchIsReproducibleWithItsSeed) {
  const testing::ExperimentToml random =
      testing::ExperimentToml("random")
          .set("model.name", "mlp")
          .set("data.dataset", "synthetic")
          .set_keys("sweep", {{"method", "random"},
                              {"trials", 5},
                              {"seed", 11},
                              {"optim.lr", testing::TomlValue::table({{"log_uniform", {1e-4, 1e-1}}})},
                              {"optim.name", {"sgd", "adam", "lion"}},
                              {"data.batch_size", testing::TomlValue::table({{"int", {16, 64}}})}});
  write("random.toml", random);
  auto a = run("sweep random.toml --dry-run");
  ASSERT_EQ(a.exit_code, 0) << a.out;
  EXPECT_NE(a.out.find("5 trials, 0 already finished"), std::string::npos) << a.out;
  EXPECT_EQ(run("sweep random.toml --dry-run").out, a.out);
  write("random.toml", testing::ExperimentToml(random).set("sweep.seed", 12));
  EXPECT_NE(run("sweep random.toml --dry-run").out, a.out) << "another seed draws other trials";
}

TEST_F(SweepTest, EveryTrialIsValidatedBeforeTheFirstStarts) {
  write("bad.toml", testing::ExperimentToml(kGrid).set("sweep.optim.name", {"sgd", "adma"}));
  auto r = run("sweep bad.toml");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("sweep trial 4 of 6 (optim.name=adma, experiment.seed=1): "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("'adma' is not one of"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(sweep_folder() / "optim.name=sgd,experiment.seed=1")) << "nothing was trained";

  auto plain = run("run bad.toml");
  EXPECT_EQ(plain.exit_code, 2) << plain.out;
  EXPECT_NE(plain.out.find("this file has a [sweep] table: run it with `plugtrain sweep"), std::string::npos)
      << plain.out;
}

TEST_F(SweepTest, ASecondSweepOnTheSameFolderRefusesNamingTheFirst) {
  write("grid.toml", kGrid);
  fs::create_directories(sweep_folder());
  const int fd = ::open((sweep_folder() / ".sweep.lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  const std::string me = std::to_string(::getpid());
  ASSERT_EQ(::pwrite(fd, me.data(), me.size(), 0), ssize_t(me.size()));
  auto r = run("sweep grid.toml");
  ::close(fd);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("another `plugtrain sweep` (pid " + me + ") is using"), std::string::npos) << r.out;
}

#ifdef PLUGTRAIN_PYTHON
// The hparams the report writes, read back with the real TensorBoard's reader and its hparams protos.
TEST_F(SweepTest, TensorBoardSeesEachTrialsHyperparameters) {
  write("grid.toml", kGrid);
  ASSERT_EQ(run("sweep grid.toml --jobs 2").exit_code, 0);
  std::ofstream(dir_ / "read_hparams.py") << R"(
import sys, glob, os
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.plugins.hparams import plugin_data_pb2
root = sys.argv[1]
ea = EventAccumulator(root); ea.Reload()
exp = plugin_data_pb2.HParamsPluginData.FromString(ea.PluginTagToContent("hparams")["_hparams_/experiment"]).experiment
print("HPARAMS", ",".join(h.name for h in exp.hparam_infos))
print("METRICS", ",".join(m.name.tag for m in exp.metric_infos))
for run in sorted(glob.glob(os.path.join(root, "*", "version_0", "tensorboard"))):
    ea = EventAccumulator(run); ea.Reload()
    content = ea.PluginTagToContent("hparams")
    start = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/session_start_info"]).session_start_info
    end = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/session_end_info"]).session_end_info
    print("RUN", start.hparams["optim.name"].string_value, int(start.hparams["experiment.seed"].number_value),
          start.hparams["optim.lr"].number_value, end.status)
)";
  auto py = run_process(std::string(PLUGTRAIN_PYTHON) + " " + shell_quote((dir_ / "read_hparams.py").string()) + " " +
                            shell_quote(sweep_folder().string()) + " 2>/dev/null",
                        false);
  ASSERT_EQ(py.exit_code, 0) << py.out;
  EXPECT_NE(py.out.find("HPARAMS experiment.seed,optim.name,optim.lr"), std::string::npos) << py.out;
  EXPECT_NE(py.out.find("METRICS epoch/test_accuracy"), std::string::npos) << py.out;
  EXPECT_NE(py.out.find("RUN sgd 2 0.1 1"), std::string::npos) << py.out;  // status 1: STATUS_SUCCESS
  EXPECT_NE(py.out.find("RUN adam 3 0.001 1"), std::string::npos) << py.out;
}
#endif

}  // namespace sweep_test
}  // namespace plugtrain
