// The stages of `plugtrain run` (run/run_stages.h) are called in order, each once, and each hands
// the next what it made: the trial steps ("fastest", data.batch_size = "auto") come between
// validation and the plan, on the validated run and its data as read once, and the plan takes
// their results as they are, timing and building nothing itself. The run is real (the bundled
// plugins, the host CPU, a run folder); only the stage sequence is a recording double whose
// stages each call the real one.
// ctest-label: unit
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "config/config_error.h"
#include "run/run_experiment.h"
#include "run/run_stages.h"
#include "support/experiment_toml.h"
#include "support/run_process.h"

namespace plugtrain {
namespace run_stages_test {

namespace fs = std::filesystem;

// What the recording stages saw, in the order the stages were called.
struct Seen {
  std::vector<std::string> calls;
  const PluginHost* host = nullptr;  // validation's
  const RunData* data = nullptr;     // validation's reader
  bool data_read_before_trials = false, data_read_after_trials = false;
  std::optional<TrialResults> trials;  // (its backend pointers go with the run's plugin host)
  std::string fastest_backend;         // the trials' choice, named while the host lives
  std::optional<RunPlan> plan;
  bool build_got_the_run_as_validated = false;  // the same plugin host and data reader
  std::int64_t built_training_samples = 0;
};

// Each stage records its call and what it was given, then calls the real stage.
RunStages recording(Seen& seen) {
  const RunStages real = run_stages();
  RunStages r;
  r.validate = [real, &seen](const RunRequest& request) {
    seen.calls.push_back("validate");
    ValidatedRun run = real.validate(request);
    seen.host = run.host.get();
    seen.data = run.data.get();
    return run;
  };
  r.trials = [real, &seen](const ValidatedRun& run, const SelectionLimits& limits, const std::optional<World>& world) {
    seen.calls.push_back("trials");
    seen.data_read_before_trials = run.data->read();
    TrialResults results = real.trials(run, limits, world);
    seen.data_read_after_trials = run.data->read();
    seen.trials = results;
    if (results.fastest) seen.fastest_backend = results.fastest->backend->name();
    return results;
  };
  r.plan = [real, &seen](const ValidatedRun& run, const TrialResults& trials, const SelectionLimits& limits,
                         const std::optional<World>& world) {
    seen.calls.push_back("plan");
    seen.plan = real.plan(run, trials, limits, world);
    return *seen.plan;
  };
  r.prepare_outputs = [real, &seen](const ValidatedRun& run, const RunPlan& plan, std::ostream& console) {
    seen.calls.push_back("prepare_outputs");
    return real.prepare_outputs(run, plan, console);
  };
  r.build = [real, &seen](const ValidatedRun& run, const RunPlan& plan, Collectives* collectives,
                          const RunOutputs* outputs, std::ostream& log) {
    seen.calls.push_back("build");
    seen.build_got_the_run_as_validated = run.host.get() == seen.host && run.data.get() == seen.data;
    std::unique_ptr<BuiltRun> built = real.build(run, plan, collectives, outputs, log);
    seen.built_training_samples = std::int64_t(built->data.train.size());
    return built;
  };
  r.train = [real, &seen](BuiltRun& built) {
    seen.calls.push_back("train");
    return real.train(built);
  };
  r.summarise = [real, &seen](const Experiment& e, RunResult& result, std::int64_t parameters, RunOutputs& outputs) {
    seen.calls.push_back("summarise");
    real.summarise(e, result, parameters, outputs);
  };
  return r;
}

const std::vector<std::string> kEveryStage{"validate", "trials", "plan",     "prepare_outputs",
                                           "build",    "train",  "summarise"};

class RunStagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::scratch_dir("stages");
    // select = "fastest" keeps what it measured per machine: here, in this test's folder.
    if (const char* cache = std::getenv("XDG_CACHE_HOME")) cache_before_ = cache;
    ::setenv("XDG_CACHE_HOME", (dir_ / "cache").c_str(), 1);
  }
  void TearDown() override {
    if (cache_before_)
      ::setenv("XDG_CACHE_HOME", cache_before_->c_str(), 1);
    else
      ::unsetenv("XDG_CACHE_HOME");
    fs::remove_all(dir_);
  }

  // A small MLP on 64 synthetic samples, one epoch, no loggers, its runs in this test's folder;
  // a test adds its batch and [backend] keys.
  testing::ExperimentToml experiment() const {
    return testing::ExperimentToml("stages")
        .set("experiment.output", (dir_ / "runs").string())
        .set("model.name", "mlp")
        .set("model.hidden", {8})
        .set("data.dataset", "synthetic")
        .set("data.synthetic_shape", {1, 4, 4})
        .set("data.synthetic_train_size", 64)
        .set("data.synthetic_test_size", 16)
        .set("train.epochs", 1)
        .set("train.log_interval", 0)
        .set("logging.loggers", testing::TomlValue::array({}));
  }
  // `experiment` written to this test's folder, as the run's request.
  RunRequest request(const testing::ExperimentToml& experiment) const {
    experiment.write(dir_ / "exp.toml");
    RunRequest r;
    r.experiment_file = dir_ / "exp.toml";
    r.plugin_paths = {PLUGTRAIN_PLUGIN_DIR};
    r.host_cpu_only = true;  // the same candidates on every machine: the host CPU alone
    r.measure_again = true;
    return r;
  }
  nlohmann::json summary() const {
    std::ifstream in(dir_ / "runs" / "stages" / "version_0" / "summary.json");
    return nlohmann::json::parse(in);
  }

  fs::path dir_;
  std::optional<std::string> cache_before_;
  std::ostringstream console_;
};

TEST_F(RunStagesTest, FastestAndAutomaticBatchAreTrialStepsBetweenValidationAndThePlan) {
  Seen seen;
  const RunResult result = run_experiment(
      recording(seen),
      request(
          experiment().set("data.batch_size", "auto").set("data.max_batch_size", 16).set("backend.select", "fastest")),
      console_);
  EXPECT_EQ(seen.calls, kEveryStage) << console_.str();
  ASSERT_TRUE(seen.trials && seen.plan);
  // The trials measured the backend and searched the batch, reading the data the run trains on.
  ASSERT_TRUE(seen.trials->fastest);
  EXPECT_EQ(seen.fastest_backend, "cpu");
  ASSERT_TRUE(seen.trials->batch_size);
  EXPECT_FALSE(seen.data_read_before_trials);
  EXPECT_TRUE(seen.data_read_after_trials);
  // The plan took their results as they are.
  EXPECT_EQ(seen.plan->choice.reasons, seen.trials->fastest->reasons);
  EXPECT_EQ(seen.plan->batch.per_device, *seen.trials->batch_size);
  EXPECT_EQ(seen.plan->batch_lines, seen.trials->batch_lines);
  // One plugin host and one read of the data, from validation to the build.
  EXPECT_TRUE(seen.build_got_the_run_as_validated);
  EXPECT_EQ(seen.built_training_samples, 64);
  EXPECT_EQ(result.backend, "cpu");
  EXPECT_EQ(summary()["step_batch"], *seen.trials->batch_size);
}

TEST_F(RunStagesTest, ARunThatAsksForNoTrialRunsNoStepBeforeThePlan) {
  Seen seen;
  run_experiment(recording(seen), request(experiment().set("data.batch_size", 16)), console_);
  EXPECT_EQ(seen.calls, kEveryStage) << console_.str();
  ASSERT_TRUE(seen.trials);
  EXPECT_FALSE(seen.trials->fastest);
  EXPECT_FALSE(seen.trials->batch_size);
  EXPECT_FALSE(seen.data_read_after_trials) << "no trial step read the data";
  EXPECT_TRUE(seen.build_got_the_run_as_validated);
  EXPECT_EQ(summary()["step_batch"], 16);
}

TEST_F(RunStagesTest, AStageThatFailsEndsTheRunThere) {
  Seen seen;
  // 1000 processes on the host CPU: the plan refuses it, after trials that had nothing to do.
  EXPECT_THROW(run_experiment(recording(seen),
                              request(experiment().set("data.batch_size", 16).set("backend.devices", 1000)), console_),
               ConfigError);
  EXPECT_EQ(seen.calls, (std::vector<std::string>{"validate", "trials", "plan"}));
  EXPECT_FALSE(fs::exists(dir_ / "runs")) << "no run folder for a run the plan refused";
}

// The plan is a function of the run and the trials' results: given results no trial could have
// found (a batch that is not a power of two, a reason of the test's own), it plans with them,
// and it runs no trial step of its own (a trial would have read the data set).
TEST_F(RunStagesTest, ThePlanTakesTheTrialsResultsAsTheyAre) {
  const ValidatedRun run =
      validate(request(experiment().set("data.batch_size", "auto").set("backend.select", "fastest")));
  TrialResults given;
  given.fastest = BackendChoice{run.host->backend("cpu"), {"chose cpu (the test says so)"}};
  given.batch_size = 24;
  given.batch_lines = {"auto: 24 per device, as the test says"};
  const RunPlan plan = plan_run(run, given, {true, {}}, std::nullopt);
  EXPECT_EQ(plan.choice.reasons, given.fastest->reasons);
  EXPECT_EQ(plan.batch.per_device, 24);
  EXPECT_EQ(plan.batch_lines, given.batch_lines);
  EXPECT_FALSE(run.data->read()) << "the plan ran steps of its own";
  // Without the trials' results it does not find them itself.
  EXPECT_THROW(plan_run(run, TrialResults{}, {true, {}}, std::nullopt), Error);
}

}  // namespace run_stages_test
}  // namespace plugtrain
