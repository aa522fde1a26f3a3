// ctest-label: e2e
// The bundled mlflow logger (plugins/mlflow) against a real MLflow server, read back through
// MLflow's own Python client: a run's params, every metric row of its metrics.csv, its files; a
// resumed run; a sweep's parent and children; a server killed in mid-run; an unreachable server;
// and the one-line errors of a bad [logging] table.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "loggers/mlflow_checks.h"
#include "support/background_run.h"
#include "support/experiment_folder.h"
#include "support/metrics_csv.h"
#include "support/mlflow_server.h"
#include "support/run_folder.h"
#include "support/synthetic_experiment.h"

namespace {

using namespace plugtrain::testing;
using nlohmann::json;
namespace fs = std::filesystem;

class MlflowTest : public ExperimentFolderTest {
 protected:
  MlflowTest() : ExperimentFolderTest("mlflow", "") {}
  static void SetUpTestSuite() {
    server_ = new MlflowServer(fs::temp_directory_path() / ("plugtrain-mlflow-server-" + std::to_string(::getpid())));
  }
  static void TearDownTestSuite() {
    const fs::path folder = fs::temp_directory_path() / ("plugtrain-mlflow-server-" + std::to_string(::getpid()));
    delete server_;
    fs::remove_all(folder);
  }
  static MlflowServer* server_;
};
MlflowServer* MlflowTest::server_ = nullptr;

TEST_F(MlflowTest, ARunSendsItsParamsEveryMetricRowAndItsFiles) {
  write_experiment(synthetic_experiment("tracked") + mlflow_table(server_->uri(), "run-test"));
  const ProcessResult r = plugtrain("run exp.toml --set train.log_interval=4");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("mlflow: run "), std::string::npos) << r.out;
  const json runs = mlflow_client_json(server_->uri(), "run-test");
  ASSERT_EQ(runs.size(), 1u) << runs.dump();
  const json& run = runs[0];
  EXPECT_EQ(run["status"], "FINISHED");
  EXPECT_EQ(run["name"], "tracked/version_0");
  EXPECT_EQ(run["params"]["optim/lr"], "0.1");
  EXPECT_EQ(run["params"]["model/hidden"], "[32]");
  EXPECT_EQ(run["params"]["train/log_interval"], "4") << "the resolved experiment, with the --set";
  EXPECT_EQ(run["params"]["data/batch_size"], "50");
  EXPECT_EQ(run["tags"]["plugtrain.backend"], "cpu");
  EXPECT_EQ(run["tags"]["plugtrain.world_size"], "1");
  EXPECT_EQ(run["tags"]["plugtrain.run_folder"], fs::absolute(run_folder(dir_, "tracked", 0)).string());
  expect_metrics_equal_csv(run, run_folder(dir_, "tracked", 0) / "metrics.csv");
  for (const char* file : {"summary.json", "metrics.csv", "experiment.toml", "model.safetensors"})
    EXPECT_NE(std::find(run["artifacts"].begin(), run["artifacts"].end(), file), run["artifacts"].end()) << file;
}

// The run pauses after epoch 1, then goes on to its end; its epoch-1 checkpoint is then resumed
// once more, so epochs 2 and 3 are trained (and logged) again, as after a crash.
TEST_F(MlflowTest, AResumedRunContinuesItsMlflowRunAndLogsNoStepTwice) {
  // The one-line form: [logging] mlflow = "http://..." (the experiment is then the run's name).
  write_experiment(synthetic_experiment("resumed") + "\n[logging]\nmlflow = \"" + server_->uri() + "\"\n");
  ASSERT_EQ(plugtrain("run exp.toml --set train.log_interval=4 --stop-after-epoch 1").exit_code, 0);
  const fs::path checkpoints = run_folder(dir_, "resumed", 0) / "checkpoints";
  fs::copy_file(checkpoints / "last.ckpt", dir_ / "epoch1.ckpt");
  const ProcessResult second = plugtrain("run exp.toml --set train.log_interval=4 --resume last");
  ASSERT_EQ(second.exit_code, 0) << second.out;
  fs::copy_file(dir_ / "epoch1.ckpt", checkpoints / "last.ckpt", fs::copy_options::overwrite_existing);
  const ProcessResult third = plugtrain("run exp.toml --set train.log_interval=4 --resume last");
  ASSERT_EQ(third.exit_code, 0) << third.out;
  const json runs = mlflow_client_json(server_->uri(), "resumed");
  ASSERT_EQ(runs.size(), 1u) << "one MLflow run for the run and its resumes: " << runs.dump();
  EXPECT_EQ(runs[0]["status"], "FINISHED");
  expect_metrics_equal_csv(runs[0], run_folder(dir_, "resumed", 0) / "metrics.csv", /*timings=*/false);
}

TEST_F(MlflowTest, ASweepIsAParentRunWithOneChildPerTrialAndItsReport) {
  std::string experiment = synthetic_experiment("swept");
  experiment.replace(experiment.find("epochs = 3"), 10, "epochs = 1");
  write_experiment(experiment + "\n[sweep]\nmethod = \"grid\"\n[sweep.optim]\nlr = [0.05, 0.1]\n");
  // MLFLOW_TRACKING_URI alone switches the logger on, as for MLflow's own clients.
  const ProcessResult r =
      run_process(plugtrain_command("sweep exp.toml", "MLFLOW_TRACKING_URI=" + server_->uri(), dir_));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json runs = mlflow_client_json(server_->uri(), "swept");
  ASSERT_EQ(runs.size(), 3u) << runs.dump();
  const json& parent = runs[0];
  EXPECT_TRUE(parent["parent"].is_null());
  EXPECT_EQ(parent["params"]["sweep/optim.lr"], "[0.05, 0.1]");
  for (const char* file : {"sweep.md", "sweep.csv", "sweep.svg"})
    EXPECT_NE(std::find(parent["artifacts"].begin(), parent["artifacts"].end(), file), parent["artifacts"].end())
        << file;
  std::set<std::string> lrs;
  for (std::size_t i = 1; i < runs.size(); ++i) {
    EXPECT_EQ(runs[i]["parent"], parent["id"]);
    EXPECT_EQ(runs[i]["status"], "FINISHED");
    lrs.insert(runs[i]["params"]["optim/lr"].get<std::string>());
  }
  EXPECT_EQ(lrs, (std::set<std::string>{"0.05", "0.1"}));
}

TEST_F(MlflowTest, AnUnreachableServerFromTheStartWarnsOnceAndTheRunEndsWell) {
  // Port 9 (discard): nothing listens on it here, so the connection is refused at once.
  write_experiment(synthetic_experiment("offline") +
                   mlflow_table("http://127.0.0.1:9", "offline", "flush_seconds = 1\n"));
  const ProcessResult r = plugtrain("run exp.toml --set train.log_interval=4");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::size_t warnings = 0;
  for (std::size_t at = r.out.find("unreachable"); at != std::string::npos; at = r.out.find("unreachable", at + 1))
    ++warnings;
  EXPECT_EQ(warnings, 2u) << "once when it started, once at the end with what was kept:\n" << r.out;
  EXPECT_NE(r.out.find("plugtrain send-logs"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(run_folder(dir_, "offline", 0) / "summary.json"));
}

// The server dies while the run trains and comes back on the same port: the run never waits
// for it, and after the run (and send-logs, where the run ended first) the server has every
// figure of metrics.csv once.
TEST_F(MlflowTest, AServerKilledInMidRunLosesNothingAndDoublesNothing) {
  const fs::path folder = dir_ / "server";
  auto server = std::make_unique<MlflowServer>(folder);
  const int port = server->port();
  write_experiment(synthetic_experiment("outage") + mlflow_table(server->uri(), "outage"));
  BackgroundRun run(
      command("run exp.toml --set train.log_interval=1 --set train.epochs=12 --set data.synthetic_train_size=3200"));
  ASSERT_TRUE(run.wait_for("epoch 1/12")) << run.out();
  server->kill_now();
  ASSERT_TRUE(run.wait_for("unreachable")) << run.out();
  server = std::make_unique<MlflowServer>(folder, port);
  const ProcessResult r = run.finish();
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const ProcessResult sent = plugtrain("send-logs " + run_folder(dir_, "outage", 0).string());
  ASSERT_EQ(sent.exit_code, 0) << sent.out;
  const json runs = mlflow_client_json(server->uri(), "outage");
  ASSERT_EQ(runs.size(), 1u) << runs.dump();
  EXPECT_EQ(runs[0]["status"], "FINISHED");
  expect_metrics_equal_csv(runs[0], run_folder(dir_, "outage", 0) / "metrics.csv");
}

// The server is away for the whole run: send-logs makes the run afterwards, whole (its params,
// every figure, its files, its end), as if it had been there.
TEST_F(MlflowTest, SendLogsMakesTheRunOfAServerThatWasAwayTheWholeTime) {
  const fs::path folder = dir_ / "server";
  auto server = std::make_unique<MlflowServer>(folder);
  const int port = server->port();
  const std::string uri = server->uri();
  server.reset();  // stopped before the run starts; the port is known
  write_experiment(synthetic_experiment("away") + mlflow_table(uri, "away", "flush_seconds = 0\n"));
  const ProcessResult r = plugtrain("run exp.toml --set train.log_interval=4");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("plugtrain send-logs"), std::string::npos) << r.out;
  server = std::make_unique<MlflowServer>(folder, port);
  const ProcessResult sent = plugtrain("send-logs " + run_folder(dir_, "away", 0).string());
  ASSERT_EQ(sent.exit_code, 0) << sent.out;
  const json runs = mlflow_client_json(server->uri(), "away");
  ASSERT_EQ(runs.size(), 1u) << runs.dump();
  EXPECT_EQ(runs[0]["status"], "FINISHED");
  EXPECT_EQ(runs[0]["params"]["optim/lr"], "0.1");
  EXPECT_EQ(runs[0]["tags"]["plugtrain.run_folder"], fs::absolute(run_folder(dir_, "away", 0)).string());
  expect_metrics_equal_csv(runs[0], run_folder(dir_, "away", 0) / "metrics.csv");
  EXPECT_NE(std::find(runs[0]["artifacts"].begin(), runs[0]["artifacts"].end(), "summary.json"),
            runs[0]["artifacts"].end());
}

class LoggingBadInputTest : public ExperimentFolderTest {
 protected:
  LoggingBadInputTest() : ExperimentFolderTest("logging_bad_input", synthetic_experiment("bad")) {}
  // One line on stderr naming `expected`, exit 2, and no run folder.
  void expect_refused(const std::string& logging, const std::string& expected) {
    write_experiment(synthetic_experiment("bad") + logging);
    const ProcessResult r = run_process(command("run exp.toml") + " 2>&1 >/dev/null", /*merge_stderr=*/false);
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find(expected), std::string::npos) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
    EXPECT_FALSE(fs::exists(dir_ / "runs")) << "refused before any work";
  }
};

TEST_F(LoggingBadInputTest, AUriThatIsNotHttpIsOneLine) {
  const std::string logging = "\n[logging.mlflow]\nuri = \"file:///tmp/mlruns\"\n";
  // The uri's line in the file the test writes: the synthetic experiment's lines come first.
  const std::string text = synthetic_experiment("bad") + logging;
  const auto line = 1 + std::count(text.begin(), text.begin() + text.find("uri ="), '\n');
  expect_refused(logging, "exp.toml:" + std::to_string(line) +
                              ":7: logging.mlflow.uri: \"file:///tmp/mlruns\" is not an http(s) URL");
}

TEST_F(LoggingBadInputTest, ACaFileThatCannotBeReadIsOneLine) {
  expect_refused("\n[logging.mlflow]\nuri = \"https://127.0.0.1:5000\"\nca_file = \"missing.pem\"\n",
                 "logging.mlflow.ca_file: \"missing.pem\" is not a readable file");
}

TEST_F(LoggingBadInputTest, AnUnknownLoggerIsOneLine) {
  expect_refused("\n[logging]\nloggers = [\"wandb\"]\n", "unknown logger 'wandb'; the loggers are");
}

TEST_F(LoggingBadInputTest, TheOneLineFormNeedsALoggerWithAUri) {
  expect_refused("\n[logging]\ntensorboard = \"runs/tb\"\n",
                 "logging.tensorboard = \"...\" sets a logger's uri, and logger 'tensorboard' has none");
}

TEST_F(LoggingBadInputTest, AnUnknownKeyInALoggersTableIsOneLine) {
  expect_refused("\n[logging.mlflow]\nuri = \"http://127.0.0.1:5000\"\nurl = \"x\"\n",
                 "logger 'mlflow' has no option 'url' (did you mean 'uri'?)");
}

}  // namespace
