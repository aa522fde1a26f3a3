// ASHA as a user runs it here (`plugtrain sweep --jobs 2`): learning rates that diverge or crawl
// stop at the first rung, the best go on by resuming their own checkpoints, the choices are those
// of a reference computation of the rungs from the trials' metrics.csv, and a sweep interrupted
// while trials wait at a rung continues without training any epoch twice.
// ctest-label: slow
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/experiment_folder.h"

namespace plugtrain {
namespace sweep_scheduler_test {

namespace fs = std::filesystem;
using ::testing::AnyOf;
using ::testing::Contains;
using ::testing::Each;
using ::testing::HasSubstr;
using testing::run_process;
using testing::shell_quote;
using testing::slurp;

// SGD with learning rates from diverging (20) and crawling (1e-5) to good, on a small synthetic
// set; rungs at epochs 1 and 3 with η = 3, the best trial trains to epoch 9.
// On the CPU, which runs --jobs 2 on any machine (a GPU machine's one GPU takes one trial).
// Inline on purpose: a test names a position in this text (exp.toml:26:20).
const std::string kAsha = R"(
[experiment]
name = "asha"
[backend]
name = "cpu"
[model]
name = "mlp"
hidden = [32]
[data]
dataset = "synthetic"
synthetic_shape = [1, 8, 8]
synthetic_classes = 10
synthetic_train_size = 300
synthetic_test_size = 400
batch_size = 30
[optim]
name = "sgd"
momentum = 0.9
[train]
epochs = 9
log_interval = 0
[sweep]
optim.lr = [20.0, 1e-5, 0.003, 0.01, 0.03, 0.1]
scheduler = "asha"
min_epochs = 1
reduction_factor = 3
)";

const std::vector<std::string> kRates = {"20.0", "1e-05", "0.003", "0.01", "0.03", "0.1"};

class AshaSweepTest : public testing::ExperimentFolderTest {
 protected:
  AshaSweepTest() : ExperimentFolderTest("asha", kAsha) {}
  fs::path trial(std::size_t i) const {
    return dir_ / "runs" / "asha" / "sweep" / ("optim.lr=" + kRates[i]) / "version_0";
  }

  // Test accuracy per epoch, and how many rows each epoch has (a repeated epoch would show 2).
  std::map<int, double> accuracy(std::size_t i, std::map<int, int>* rows = nullptr) const {
    std::map<int, double> out;
    std::ifstream in(trial(i) / "metrics.csv");
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("epoch,", 0) != 0) continue;
      std::vector<std::string> cells;
      std::stringstream s(line);
      for (std::string c; std::getline(s, c, ',');) cells.push_back(c);
      const int epoch = std::stoi(cells[1]);
      out[epoch] = cells[6].empty() || cells[6] == "nan" ? -1.0 : std::stod(cells[6]);
      if (rows) ++(*rows)[epoch];
    }
    return out;
  }

  // The rungs computed here from the trials' own figures: at epoch 1 the best ⌊6/3⌋ = 2 go on,
  // at epoch 3 the best ⌊2/3⌋ → 1 goes on to 9 (a diverged run's NaN ranks last; ties by order).
  std::vector<int> reference_epochs() const {
    auto best = [&](std::vector<std::size_t> ids, int epoch, std::size_t keep) {
      std::stable_sort(ids.begin(), ids.end(),
                       [&](std::size_t a, std::size_t b) { return accuracy(a).at(epoch) > accuracy(b).at(epoch); });
      ids.resize(keep);
      return ids;
    };
    std::vector<int> epochs(6, 1);
    const auto rung2 = best({0, 1, 2, 3, 4, 5}, 1, 2);
    for (auto i : rung2) epochs[i] = 3;
    for (auto i : best(rung2, 3, 1)) epochs[i] = 9;
    return epochs;
  }

  void expect_asha_choices() {
    const std::vector<int> expected = reference_epochs();
    int total = 0;
    for (std::size_t i = 0; i < 6; ++i) {
      std::map<int, int> rows;
      const auto acc = accuracy(i, &rows);
      EXPECT_EQ(int(acc.size()), expected[i]) << "trial lr=" << kRates[i];
      for (const auto& [epoch, n] : rows)
        EXPECT_EQ(n, 1) << "lr=" << kRates[i] << " trained epoch " << epoch << " twice";
      total += int(acc.size());
    }
    EXPECT_EQ(expected[0], 1) << "lr 20 diverges: stopped at the first rung";
    EXPECT_EQ(expected[1], 1) << "lr 1e-5 crawls: stopped at the first rung";
    EXPECT_EQ(total, 6 + 2 * 2 + 6);
  }
};

TEST_F(AshaSweepTest, DivergingAndCrawlingTrialsStopAtTheFirstRungAndTheBestTrainsToTheEnd) {
  const auto r = plugtrain("sweep exp.toml --jobs 2");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("asha on test_accuracy (max): rungs at epochs 1, 3, the best go on to 9"), std::string::npos)
      << r.out;
  expect_asha_choices();
  // The promoted trials resumed their own checkpoints: their logs say so, and no trial restarted.
  const std::vector<int> expected = reference_epochs();
  for (std::size_t i = 0; i < 6; ++i)
    if (expected[i] > 1) EXPECT_NE(slurp(trial(i) / "train.log").find("resum"), std::string::npos) << kRates[i];
  EXPECT_FALSE(fs::exists(trial(0).parent_path() / "version_1")) << "a promotion never starts a trial again";
  EXPECT_NE(r.out.find("compute: 16 epochs trained; the full grid trains 54 (30%)"), std::string::npos) << r.out;
  EXPECT_NE(slurp(dir_ / "runs" / "asha" / "sweep" / "sweep.md").find("| optim.lr=20.0 | stopped at rung 1"),
            std::string::npos);
  // The report and the status say the same from the files alone.
  const auto status = run_process(command("sweep --status runs/asha/sweep --json"), false);
  EXPECT_EQ(status.exit_code, 0) << status.out;
  const nlohmann::json j = nlohmann::json::parse(status.out);
  std::vector<std::string> states, details;
  for (const auto& t : j.at("trials")) {
    states.push_back(t.at("state"));
    details.push_back(t.at("detail"));
  }
  // Every trial is done: the diverging one stopped at the first rung, the best trained all 9 epochs.
  EXPECT_THAT(states, Each(AnyOf("finished", "stopped"))) << j.dump(2);
  EXPECT_THAT(details, Contains(HasSubstr("stopped at rung 1 (epoch 1"))) << j.dump(2);
  EXPECT_THAT(details, Contains(HasSubstr("trained all 9 epochs"))) << j.dump(2);
  EXPECT_THAT(j.at("scheduler").get<std::string>(), HasSubstr("asha on test_accuracy (max)"));
  const auto report = plugtrain("report runs/asha");
  EXPECT_NE(report.out.find("compute: 16 epochs trained"), std::string::npos) << report.out;
  // Again: nothing left, nothing trained.
  const auto again = plugtrain("sweep exp.toml");
  EXPECT_EQ(again.exit_code, 0) << again.out;
  expect_asha_choices();
}

TEST_F(AshaSweepTest, InterruptedWhileTrialsWaitAtARungItContinuesWithoutRepeatingAnEpoch) {
  const fs::path log = dir_ / "first.log";
  const std::string start = command("sweep exp.toml --jobs 1") + " > " + shell_quote(log.string()) + " 2>&1 & S=$!; " +
                            "for i in $(seq 1200); do grep -q 'waits at its rung' " + shell_quote(log.string()) +
                            " && break; sleep 0.1; done; kill -INT $S; wait $S; echo EXIT=$?";
  const auto first = run_process(start);
  EXPECT_NE(first.out.find("EXIT=130"), std::string::npos) << first.out << slurp(log);
  // A sweep half done: report and status read what its trials wrote so far.
  const auto half = plugtrain("report runs/asha");
  EXPECT_EQ(half.exit_code, 0) << half.out;
  EXPECT_NE(half.out.find("| paused |"), std::string::npos) << half.out;
  EXPECT_NE(half.out.find("compute: "), std::string::npos) << half.out;
  EXPECT_EQ(plugtrain("sweep --status runs/asha").exit_code, 0);
  const auto second = plugtrain("sweep exp.toml --jobs 2");
  ASSERT_EQ(second.exit_code, 0) << second.out;
  expect_asha_choices();
}

TEST_F(AshaSweepTest, HyperbandRunsTwoBracketsAndTheBestOfEachTrainsToTheEnd) {
  std::string hyperband = kAsha;
  hyperband.replace(hyperband.find("scheduler = \"asha\""), 18, "scheduler = \"hyperband\"\nbrackets = 2");
  write_experiment(hyperband);
  const auto r = plugtrain("sweep exp.toml --jobs 2");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // Weights η^s/(s+1): 3 and 1.5, so 4 trials start at epoch 1 (rungs 1, 3) and 2 at epoch 3.
  // Bracket 0: 4 + 1·2 + 1·6 epochs; bracket 1: 2·3 + 1·6: 24 in all, one winner per bracket.
  EXPECT_NE(r.out.find("compute: 24 epochs trained; the full grid trains 54 (44%)"), std::string::npos) << r.out;
  std::size_t winners = 0;
  for (std::size_t at = r.out.find("trained all 9 epochs"); at != std::string::npos;
       at = r.out.find("trained all 9 epochs", at + 1))
    ++winners;
  EXPECT_EQ(winners, 2u) << r.out;
  EXPECT_NE(r.out.find("| 1 | 1 | 3 | 2 | 1 |"), std::string::npos) << "bracket 1's first rung is epoch 3: " << r.out;
}

TEST_F(AshaSweepTest, TrialsThatFailLeaveTheRungAndTheOthersGoOn) {
  std::ofstream(dir_ / "bad.pt") << "this is not a torch.save file";
  std::string failing = kAsha;
  failing.replace(failing.find("optim.lr = ["), failing.find("]\nscheduler") - failing.find("optim.lr = [") + 1,
                  "optim.lr = [0.01, 0.03, 0.1]\nmodel.init = [\"\", \"bad.pt\"]");
  write_experiment(failing);
  const auto r = plugtrain("sweep exp.toml --jobs 2");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("plugtrain: error: 3 trial(s) failed"), std::string::npos) << r.out;
  // The 3 that ran make rung 1; ⌊3/3⌋ = 1 of them trains on to epoch 9.
  EXPECT_NE(r.out.find("trained all 9 epochs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("compute: 11 epochs trained; the full grid trains 54"), std::string::npos) << r.out;
}

TEST_F(AshaSweepTest, ARandomSearchDrawsChoicesAndRangesWithSamples) {
  write_experiment(kAsha.substr(0, kAsha.find("[sweep]")) +
                   "[sweep]\nmethod = \"random\"\nsamples = 4\nseed = 7\noptim.lr = { log_uniform = [1e-3, 1e-1] }\n"
                   "optim.name = { choice = [\"sgd\", \"adam\"] }\n");
  const auto a = plugtrain("sweep exp.toml --dry-run");
  ASSERT_EQ(a.exit_code, 0) << a.out;
  EXPECT_NE(a.out.find("sweep: 4 trials (random)"), std::string::npos) << a.out;
  EXPECT_EQ(a.out, plugtrain("sweep exp.toml --dry-run").out) << "seeded: the same draws";
  EXPECT_NE(a.out.find("optim.name=adam"), std::string::npos) << a.out;
  EXPECT_NE(a.out.find("optim.name=sgd"), std::string::npos) << a.out;
  write_experiment(kAsha.substr(0, kAsha.find("[sweep]")) +
                   "[sweep]\nmethod = \"random\"\nsamples = 2\n"
                   "optim.name = { choise = [\"sgd\", \"adam\"] }\n");
  const auto typo = plugtrain("sweep exp.toml --dry-run");
  EXPECT_EQ(typo.exit_code, 2) << typo.out;
  EXPECT_NE(typo.out.find("'choise' is not a range (did you mean 'choice'?)"), std::string::npos) << typo.out;
}

TEST_F(AshaSweepTest, WithoutSbatchSlurmIsOneLineAndAReductionFactorBelowTwoIsNamed) {
  const auto no_sbatch = run_process(testing::plugtrain_command("sweep exp.toml --slurm", "PATH=/nowhere", dir_));
  EXPECT_EQ(no_sbatch.exit_code, 1) << no_sbatch.out;
  EXPECT_NE(no_sbatch.out.find("plugtrain: error: --slurm: no sbatch on PATH"), std::string::npos) << no_sbatch.out;
  std::string eta_one = kAsha;
  eta_one.replace(eta_one.find("reduction_factor = 3"), 20, "reduction_factor = 1");
  write_experiment(eta_one);
  const auto eta = plugtrain("sweep exp.toml --dry-run");
  EXPECT_EQ(eta.exit_code, 2) << eta.out;
  EXPECT_NE(eta.out.find("exp.toml:26:20: sweep.reduction_factor (η) must be an integer >= 2, got 1"),
            std::string::npos)
      << eta.out;
}

}  // namespace sweep_scheduler_test
}  // namespace plugtrain
