// The rung scheduler's decisions (sweep/rung_scheduler.h), as a pure function of what the
// trials' files say: rungs, promotions of the best 1/η, waiting for a rung's stragglers, NaN
// and failed trials, trials ended by their own early stopping, Hyperband's brackets; and the
// [sweep] keys that configure it, with their one-line errors.
// ctest-label: unit
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include <gtest/gtest.h>

#include "config/config_error.h"
#include "config/experiment_loader.h"
#include "support/run_process.h"
#include "sweep/rung_scheduler.h"
#include "sweep/sweep_spec.h"

namespace plugtrain {
namespace rung_scheduler_test {

RungSchedule asha(std::int64_t min_epochs, std::int64_t max_epochs, std::int64_t eta = 3) {
  RungSchedule s;
  s.kind = SweepScheduler::asha;
  s.min_epochs = min_epochs;
  s.max_epochs = max_epochs;
  s.reduction_factor = eta;
  return s;
}

// A trial that trained `epochs` epochs with `value` as its metric at every epoch.
TrialProgress at(std::int64_t epochs, double value) {
  TrialProgress p;
  p.epochs_done = epochs;
  for (std::int64_t e = 1; e <= epochs; ++e) p.metric[e] = value;
  return p;
}

TEST(RungScheduler, RungsAreMinTimesPowersOfEtaBelowMaxThenMax) {
  EXPECT_EQ(asha(1, 9).milestones(0), (std::vector<std::int64_t>{1, 3, 9}));
  EXPECT_EQ(asha(1, 10).milestones(0), (std::vector<std::int64_t>{1, 3, 9, 10}));
  EXPECT_EQ(asha(2, 8, 2).milestones(0), (std::vector<std::int64_t>{2, 4, 8}));
  EXPECT_EQ(asha(1, 9).milestones(1), (std::vector<std::int64_t>{3, 9}));
  RungSchedule none;
  none.max_epochs = 5;
  EXPECT_EQ(none.milestones(0), (std::vector<std::int64_t>{5}));
}

TEST(RungScheduler, EveryTrialFirstTrainsToTheFirstRung) {
  const auto d = decide_rungs(asha(1, 9), std::vector<TrialProgress>(6));
  for (const auto& x : d) {
    EXPECT_EQ(x.verdict, TrialVerdict::run);
    EXPECT_EQ(x.until_epoch, 1);
  }
}

TEST(RungScheduler, ARungWaitsForItsStragglersBeforeDeciding) {
  const auto d = decide_rungs(asha(1, 9), {at(1, 0.9), at(0, 0), at(1, 0.5)});
  EXPECT_EQ(d[0].verdict, TrialVerdict::waiting);
  EXPECT_EQ(d[1].verdict, TrialVerdict::run);
  EXPECT_EQ(d[1].until_epoch, 1);
  EXPECT_EQ(d[2].verdict, TrialVerdict::waiting);
}

TEST(RungScheduler, TheBestThirdGoesOnAndTheRestStopAtTheRung) {
  std::vector<TrialProgress> p;
  for (double v : {0.1, 0.9, 0.5, 0.7, 0.2, 0.3, 0.8, 0.4, 0.6}) p.push_back(at(1, v));
  const auto d = decide_rungs(asha(1, 9), p);
  for (std::size_t i : {1, 6, 3}) {  // 0.9, 0.8, 0.7
    EXPECT_EQ(d[i].verdict, TrialVerdict::run) << i;
    EXPECT_EQ(d[i].until_epoch, 3) << i;
    EXPECT_EQ(d[i].rung, 1) << i;
  }
  for (std::size_t i : {0, 2, 4, 5, 7, 8}) {
    EXPECT_EQ(d[i].verdict, TrialVerdict::stopped) << i;
    EXPECT_EQ(d[i].rung, 0) << i;
    EXPECT_EQ(d[i].rung_epoch, 1) << i;
  }
}

TEST(RungScheduler, ALossIsMinimisedAndNaNRanksLast) {
  RungSchedule s = asha(1, 4, 2);
  s.maximise = false;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto d = decide_rungs(s, {at(1, nan), at(1, 0.3), at(1, 0.2), at(1, 2.0)});
  EXPECT_EQ(d[2].verdict, TrialVerdict::run);  // 0.2 and 0.3 go on
  EXPECT_EQ(d[1].verdict, TrialVerdict::run);
  EXPECT_EQ(d[0].verdict, TrialVerdict::stopped);  // diverged
  EXPECT_EQ(d[3].verdict, TrialVerdict::stopped);
}

TEST(RungScheduler, OnePromotedAtLeastAndTheWinnerTrainsToTheEnd) {
  const auto d = decide_rungs(asha(1, 9), {at(3, 0.5), at(1, 0.4)});
  // Two trials at rung 1: ⌊2/3⌋ = 0, but one always goes on. At rung 2 it is alone: it goes on to 9.
  EXPECT_EQ(d[0].verdict, TrialVerdict::run);
  EXPECT_EQ(d[0].until_epoch, 9);
  EXPECT_EQ(d[1].verdict, TrialVerdict::stopped);
  const auto done = decide_rungs(asha(1, 9), {at(9, 0.5), at(1, 0.4)});
  EXPECT_EQ(done[0].verdict, TrialVerdict::complete);
}

TEST(RungScheduler, FailedAndEndedTrialsKeepTheirPlaceAtTheRungsTheyReached) {
  TrialProgress failed = at(1, 0.99);
  failed.failed = true;  // reached epoch 1, then failed
  TrialProgress ended = at(1, 0.95);
  ended.ended = true;  // its own early stopping after epoch 1
  TrialProgress early_failure = at(0, 0);
  early_failure.failed = true;  // failed before the first rung: not part of it
  const auto d = decide_rungs(asha(1, 9, 2), {failed, at(1, 0.5), ended, at(1, 0.6), early_failure});
  // Rung 1 (epoch 1): 4 trials reached it, ⌊4/2⌋ = 2 places: the failed one (0.99) and the ended
  // one (0.95) hold them, and neither can go on; 0.6 and 0.5 stop there.
  EXPECT_EQ(d[0].verdict, TrialVerdict::failed);
  EXPECT_EQ(d[2].verdict, TrialVerdict::complete);
  EXPECT_EQ(d[1].verdict, TrialVerdict::stopped);
  EXPECT_EQ(d[3].verdict, TrialVerdict::stopped);
  EXPECT_EQ(d[4].verdict, TrialVerdict::failed);
}

TEST(RungScheduler, APromotedTrialThatFailsLaterDoesNotReopenItsRung) {
  std::vector<TrialProgress> p;
  for (double v : {0.1, 0.9, 0.5, 0.7, 0.2, 0.3}) p.push_back(at(1, v));
  p[1].failed = true;  // promoted from rung 1 (0.9), then failed on its way to epoch 3
  const auto d = decide_rungs(asha(1, 9), p);
  EXPECT_EQ(d[1].verdict, TrialVerdict::failed);
  EXPECT_EQ(d[3].verdict, TrialVerdict::run) << "0.7 still goes on";
  // ⌊6/3⌋ = 2 places; the failed trial keeps its own, 0.5 stays stopped as decided.
  for (std::size_t i : {0, 2, 4, 5}) EXPECT_EQ(d[i].verdict, TrialVerdict::stopped) << i;
}

TEST(RungScheduler, HyperbandDealsTrialsToBracketsInItsProportions) {
  RungSchedule s = asha(1, 9);
  s.kind = SweepScheduler::hyperband;
  s.brackets = 3;
  const auto brackets = s.bracket_of_trials(11);
  std::vector<int> count(3, 0);
  for (auto b : brackets) ++count[std::size_t(b)];
  // Weights η^s/(s+1): 9/3 = 3, 3/2 = 1.5, 1: 11 trials as 6, 3, 2.
  EXPECT_EQ(count, (std::vector<int>{6, 3, 2}));
  // Bracket 2 starts at epoch 9: its trials train to the end at once.
  std::vector<TrialProgress> none(11);
  const auto d = decide_rungs(s, none);
  for (std::size_t i = 0; i < d.size(); ++i) {
    EXPECT_EQ(d[i].bracket, brackets[i]);
    EXPECT_EQ(d[i].until_epoch, brackets[i] == 0 ? 1 : brackets[i] == 1 ? 3 : 9) << i;
  }
}

class SchedulerKeys : public ::testing::Test {
 protected:
  // `dataset`: the data set's registration (null: none known).
  RungSchedule read(const std::string& sweep_table, const RegisteredDataset* dataset = nullptr) {
    const std::filesystem::path file = testing::scratch_dir("rungs") / "exp.toml";
    std::ofstream(file) << "[model]\nname = \"mlp\"\n[train]\nepochs = 9\n[sweep]\noptim.lr = [0.1, 0.01]\n"
                        << sweep_table;
    const ExperimentFile f = parse_experiment_file(file);
    return resolve_rung_schedule(read_sweep(f).scheduler, resolve_experiment(f), dataset);
  }
  std::string error(const std::string& sweep_table, const RegisteredDataset* dataset = nullptr) {
    try {
      read(sweep_table, dataset);
    } catch (const ConfigError& e) { return e.what(); }
    return "no error";
  }
};

TEST_F(SchedulerKeys, DefaultsComeFromTheRunsMonitorAndEpochs) {
  const RungSchedule s = read("scheduler = \"asha\"\n");
  EXPECT_EQ(s.kind, SweepScheduler::asha);
  EXPECT_EQ(s.max_epochs, 9);
  EXPECT_EQ(s.min_epochs, 1);
  EXPECT_EQ(s.reduction_factor, 3);
  EXPECT_EQ(s.metric, "test_accuracy");
  EXPECT_TRUE(s.maximise);
  const RungSchedule loss = read("scheduler = \"hyperband\"\nmetric = \"test_loss\"\nmax_epochs = 27\n");
  EXPECT_FALSE(loss.maximise);
  EXPECT_EQ(loss.brackets, 4);  // rungs 1, 3, 9 below 27: up to 4 brackets
}

TEST_F(SchedulerKeys, ADataSetsOwnValidationSplitRanksTheTrials) {
  RegisteredDataset tiny;
  tiny.spec.name = "tiny-imagenet";
  tiny.spec.validation_split = "val";
  EXPECT_EQ(read("scheduler = \"asha\"\n", &tiny).metric, "val_accuracy");
  EXPECT_NE(error("scheduler = \"asha\"\nmetric = \"test_loss\"\n", &tiny)
                .find("exp.toml:8:10: sweep.metric 'test_loss' would rank the trials by the test set although data set "
                      "'tiny-imagenet' has its own validation split: use 'val_loss'"),
            std::string::npos);
}

TEST_F(SchedulerKeys, BadKeysAreOneLineNamingThem) {
  EXPECT_NE(error("scheduler = \"asha\"\nreduction_factor = 1\n")
                .find("exp.toml:8:20: sweep.reduction_factor (η) must be an integer >= 2, got 1"),
            std::string::npos);
  EXPECT_NE(error("scheduler = \"asha\"\nmin_epochs = 9\n").find("sweep.min_epochs (9) must be below max_epochs (9"),
            std::string::npos);
  EXPECT_NE(error("scheduler = \"asha\"\nbrackets = 2\n")
                .find("exp.toml:8:12: sweep.brackets belongs to scheduler = \"hyperband\""),
            std::string::npos);
  EXPECT_NE(
      error("scheduler = \"asha\"\nmetric = \"acc\"\n")
          .find("exp.toml:8:10: sweep.metric 'acc' is not a metric of task 'classification'; its metrics: "
                "train_loss, val_loss, test_loss, train_accuracy, val_accuracy, val_top5_accuracy, test_accuracy, "
                "test_top5_accuracy"),
      std::string::npos);
  EXPECT_NE(error("min_epochs = 2\n").find("sweep.min_epochs belongs to an early-stopping scheduler"),
            std::string::npos);
  EXPECT_NE(error("scheduler = \"fast\"\n").find("sweep.scheduler must be one of none, asha, hyperband"),
            std::string::npos);
  EXPECT_NE(error("scheduler = \"hyperband\"\nbrackets = 5\nmax_epochs = 27\n").find("so at most 4 brackets"),
            std::string::npos);
  for (const char* line : {"scheduler = \"asha\"\nreduction_factor = 1\n", "min_epochs = 2\n"})
    EXPECT_EQ(error(line).find('\n'), std::string::npos) << error(line);
}

}  // namespace rung_scheduler_test
}  // namespace plugtrain
