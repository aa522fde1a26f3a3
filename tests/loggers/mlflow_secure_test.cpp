// ctest-label: e2e
// The bundled mlflow logger against MLflow as teams run it, one real server for the suite: its
// login on (`--app-name basic-auth`, a user the test makes), behind a TLS terminator (stunnel4,
// a certificate the test makes), and no artifact serving (`--no-serve-artifacts`: a run's
// artifact URI is a folder, which the plugin writes as MLflow's own client does). Read back
// through MLflow's Python client with the same login and certificate.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "loggers/mlflow_checks.h"
#include "support/experiment_folder.h"
#include "support/mlflow_server.h"
#include "support/run_folder.h"
#include "support/synthetic_experiment.h"

namespace {

using namespace plugtrain::testing;
using nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kUser = "trainer";
constexpr const char* kPassword = "trainer-secret-6174";
constexpr const char* kToken = "trainer-token-90210";

fs::path server_folder() {
  return fs::temp_directory_path() / ("plugtrain-mlflow-secure-" + std::to_string(::getpid()));
}

// Each line of `out` that holds `text`.
std::vector<std::string> lines_with(const std::string& out, const std::string& text) {
  std::vector<std::string> found;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);)
    if (line.find(text) != std::string::npos) found.push_back(line);
  return found;
}

// No file of the run folder (train.log, experiment.toml and so the params, summary.json,
// metrics.csv, the mlflow journal and state), nor what the run printed, holds `secret`.
void expect_nowhere(const fs::path& run, const std::string& out, const std::string& secret) {
  EXPECT_EQ(out.find(secret), std::string::npos) << out;
  for (const char* file : {"train.log", "experiment.toml", "summary.json", "metrics.csv", "mlflow/journal.jsonl"})
    EXPECT_TRUE(fs::exists(run / file)) << file;
  for (const auto& entry : fs::recursive_directory_iterator(run))
    if (entry.is_regular_file())
      EXPECT_EQ(slurp(entry.path()).find(secret), std::string::npos) << entry.path() << " holds " << secret;
}

class MlflowSecureTest : public ExperimentFolderTest {
 protected:
  MlflowSecureTest() : ExperimentFolderTest("mlflow_secure", "") {}
  static void SetUpTestSuite() {
    missing_ = TlsFront::missing_tools();
    if (!missing_.empty()) return;
    try {
      server_ = new MlflowServer(server_folder(), 0, {/*basic_auth=*/true, /*serve_artifacts=*/false});
      server_->add_user(kUser, kPassword);
      server_->add_token(kToken, kUser);
      tls_ = new TlsFront(server_folder() / "tls", server_->port());
    } catch (const std::exception& e) { broken_ = e.what(); }
  }
  static void TearDownTestSuite() {
    delete tls_;
    delete server_;
    fs::remove_all(server_folder());
  }
  void SetUp() override {
    if (!missing_.empty()) GTEST_SKIP() << "no TLS terminator: " << missing_;
    if (!broken_.empty()) FAIL() << "the secure MLflow server did not start: " << broken_;
    ExperimentFolderTest::SetUp();
  }

  // The login as MLflow's variables, for plugtrain or MLflow's client.
  static std::string login(const std::string& password = kPassword) {
    return "-u MLFLOW_TRACKING_TOKEN MLFLOW_TRACKING_USERNAME=" + std::string(kUser) +
           " MLFLOW_TRACKING_PASSWORD=" + password;
  }
  ProcessResult plugtrain_as(const std::string& password, const std::string& args) const {
    return run_process(plugtrain_command(args, login(password), dir_));
  }
  // The [logging.mlflow] table for the server over https; `trusted`: with its certificate.
  static std::string secure_table(const std::string& experiment, bool trusted) {
    return mlflow_table(tls_->uri(), experiment,
                        trusted ? "ca_file = \"" + tls_->certificate().string() + "\"\n" : std::string());
  }
  static json read_back(const std::string& experiment) {
    return mlflow_client_json(tls_->uri(), experiment,
                              login() + " MLFLOW_TRACKING_SERVER_CERT_PATH=" + tls_->certificate().string());
  }

  static std::string missing_, broken_;
  static MlflowServer* server_;
  static TlsFront* tls_;
};
std::string MlflowSecureTest::missing_, MlflowSecureTest::broken_;
MlflowServer* MlflowSecureTest::server_ = nullptr;
TlsFront* MlflowSecureTest::tls_ = nullptr;

// The files of a run whose artifact URI is a folder: there, as MLflow's client lists them, with
// the run folder's bytes.
void expect_files_in_folder(const json& run, const fs::path& artifact_root, const fs::path& run_folder) {
  for (const char* file : {"summary.json", "metrics.csv", "experiment.toml", "model.safetensors"})
    EXPECT_NE(std::find(run["artifacts"].begin(), run["artifacts"].end(), file), run["artifacts"].end()) << file;
  bool found = false;
  for (const auto& entry : fs::recursive_directory_iterator(artifact_root)) {
    if (entry.path().filename() != "summary.json" ||
        entry.path().parent_path().parent_path().filename() != run["id"].get<std::string>())
      continue;
    found = true;
    EXPECT_EQ(slurp(entry.path()), slurp(run_folder / "summary.json"));
  }
  EXPECT_TRUE(found) << "no <experiment>/<run id>/artifacts/summary.json under " << artifact_root;
}

TEST_F(MlflowSecureTest, ATrustedCertificateAndALoginSendTheRunAndItsFilesGoToTheArtifactFolder) {
  write_experiment(synthetic_experiment("secure") + secure_table("secure", /*trusted=*/true));
  const ProcessResult r = plugtrain_as(kPassword, "run exp.toml --set train.log_interval=4");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("mlflow: run "), std::string::npos) << r.out;
  const json runs = read_back("secure");
  ASSERT_EQ(runs.size(), 1u) << runs.dump();
  EXPECT_EQ(runs[0]["status"], "FINISHED");
  EXPECT_EQ(runs[0]["params"]["optim/lr"], "0.1");
  const fs::path run = run_folder(dir_, "secure", 0);
  expect_metrics_equal_csv(runs[0], run / "metrics.csv");
  expect_files_in_folder(runs[0], server_->artifact_root(), run);
  expect_nowhere(run, r.out, kPassword);
  expect_nowhere(run, r.out, std::string(kUser) + ":" + kPassword);
  EXPECT_EQ(runs[0].dump().find(kPassword), std::string::npos) << "the server's params and tags hold the password";
}

TEST_F(MlflowSecureTest, AnUntrustedCertificateIsOneLineNamingTheServerAndTrainingGoesOn) {
  write_experiment(synthetic_experiment("untrusted") + secure_table("untrusted", /*trusted=*/false));
  const ProcessResult r = plugtrain_as(kPassword, "run exp.toml");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::vector<std::string> said = lines_with(r.out, "certificate is not trusted");
  ASSERT_FALSE(said.empty()) << r.out;
  EXPECT_NE(said[0].find(tls_->uri()), std::string::npos) << said[0];
  EXPECT_NE(said[0].find("self-signed certificate"), std::string::npos) << said[0];
  EXPECT_NE(said[0].find("ca_file"), std::string::npos) << said[0];
  EXPECT_EQ(lines_with(r.out, "unreachable").size(), 0u) << "refused once, not retried:\n" << r.out;
  EXPECT_TRUE(fs::exists(run_folder(dir_, "untrusted", 0) / "summary.json"));
  EXPECT_EQ(read_back("untrusted").size(), 0u);

  // MLflow's own way out, for whoever accepts the risk: MLFLOW_TRACKING_INSECURE_TLS=true.
  const ProcessResult unchecked =
      run_process(plugtrain_command("run exp.toml", login() + " MLFLOW_TRACKING_INSECURE_TLS=true", dir_));
  ASSERT_EQ(unchecked.exit_code, 0) << unchecked.out;
  EXPECT_NE(unchecked.out.find("mlflow: run "), std::string::npos) << unchecked.out;
  EXPECT_EQ(read_back("untrusted").size(), 1u);
}

// A wrong password is said in one line naming the status and the user (never the password); the
// figures and files stay kept, and send-logs with the right password delivers them whole.
TEST_F(MlflowSecureTest, AWrongPasswordIsOneLineAndSendLogsWithTheRightOneDeliversTheRun) {
  const std::string wrong = "not-the-password-4711";
  write_experiment(synthetic_experiment("refused") + secure_table("refused", /*trusted=*/true));
  const ProcessResult r = plugtrain_as(wrong, "run exp.toml --set train.log_interval=4");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::vector<std::string> said = lines_with(r.out, "HTTP 401");
  ASSERT_FALSE(said.empty()) << r.out;
  EXPECT_NE(said[0].find("user \"trainer\""), std::string::npos) << said[0];
  EXPECT_NE(r.out.find("plugtrain send-logs"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(run_folder(dir_, "refused", 0) / "summary.json"));
  EXPECT_EQ(read_back("refused").size(), 0u);

  const fs::path run = run_folder(dir_, "refused", 0);
  const ProcessResult sent = plugtrain_as(kPassword, "send-logs " + run.string());
  ASSERT_EQ(sent.exit_code, 0) << sent.out;
  const json runs = read_back("refused");
  ASSERT_EQ(runs.size(), 1u) << runs.dump();
  EXPECT_EQ(runs[0]["status"], "FINISHED");
  expect_metrics_equal_csv(runs[0], run / "metrics.csv");
  expect_files_in_folder(runs[0], server_->artifact_root(), run);
  for (const std::string& secret : {wrong, std::string(kPassword), std::string(kUser) + ":" + kPassword}) {
    expect_nowhere(run, r.out + sent.out, secret);
    EXPECT_EQ(runs[0].dump().find(secret), std::string::npos) << "the server's params and tags hold " << secret;
  }
}

// MLFLOW_TRACKING_TOKEN goes as a bearer token (which the server takes as the user's login); a
// token it does not know is one line naming the variable, never the token.
TEST_F(MlflowSecureTest, ATokenFromMlflowTrackingTokenLogsInAndAWrongOneIsOneLine) {
  const std::string no_user = "-u MLFLOW_TRACKING_USERNAME -u MLFLOW_TRACKING_PASSWORD ";
  write_experiment(synthetic_experiment("token") + secure_table("token", /*trusted=*/true));
  const ProcessResult r =
      run_process(plugtrain_command("run exp.toml", no_user + "MLFLOW_TRACKING_TOKEN=" + kToken, dir_));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json runs = read_back("token");
  ASSERT_EQ(runs.size(), 1u) << runs.dump();
  EXPECT_EQ(runs[0]["status"], "FINISHED");
  expect_metrics_equal_csv(runs[0], run_folder(dir_, "token", 0) / "metrics.csv");
  expect_nowhere(run_folder(dir_, "token", 0), r.out, kToken);

  const ProcessResult wrong =
      run_process(plugtrain_command("run exp.toml", no_user + "MLFLOW_TRACKING_TOKEN=not-a-token-31337", dir_));
  ASSERT_EQ(wrong.exit_code, 0) << wrong.out;
  const std::vector<std::string> said = lines_with(wrong.out, "HTTP 401");
  ASSERT_FALSE(said.empty()) << wrong.out;
  EXPECT_NE(said[0].find("MLFLOW_TRACKING_TOKEN"), std::string::npos) << said[0];
  expect_nowhere(run_folder(dir_, "token", 1), wrong.out, "not-a-token-31337");
}

// A user in the URI (https://user:password@host) logs in too; the plugin keeps and says the URI
// without it (experiment.toml keeps the TOML as written: docs/experiment.md says to prefer the
// variables).
TEST_F(MlflowSecureTest, AUserInTheUriLogsInAndThePluginNeitherKeepsNorSaysIt) {
  std::string uri = tls_->uri();
  uri.insert(uri.find("://") + 3, std::string(kUser) + ":" + kPassword + "@");
  write_experiment(synthetic_experiment("in-uri") +
                   mlflow_table(uri, "in-uri", "ca_file = \"" + tls_->certificate().string() + "\"\n"));
  const ProcessResult r = run_process(plugtrain_command("run exp.toml",
                                                        "-u MLFLOW_TRACKING_TOKEN -u "
                                                        "MLFLOW_TRACKING_USERNAME -u "
                                                        "MLFLOW_TRACKING_PASSWORD",
                                                        dir_));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json runs = read_back("in-uri");
  ASSERT_EQ(runs.size(), 1u) << runs.dump();
  EXPECT_EQ(runs[0]["status"], "FINISHED");
  const fs::path run = run_folder(dir_, "in-uri", 0);
  EXPECT_EQ(r.out.find(kPassword), std::string::npos) << r.out;
  for (const char* file : {"train.log", "summary.json", "metrics.csv", "mlflow/journal.jsonl", "mlflow/state.json"})
    EXPECT_EQ(slurp(run / file).find(kPassword), std::string::npos) << file;
  EXPECT_EQ(runs[0].dump().find(kPassword), std::string::npos);
}

// An experiment whose artifact location is a folder this machine cannot write (its parent is a
// file): the run's figures arrive, and its files are said not uploaded, once, naming the URI.
TEST_F(MlflowSecureTest, FilesForAnArtifactFolderThatCannotBeWrittenAreSaidOnceAndTheFiguresArrive) {
  std::ofstream(dir_ / "a-file") << "not a folder\n";
  const std::string location = "file://" + (dir_ / "a-file" / "store").string();
  server_->post_as(kUser, kPassword, "experiments/create", {{"name", "elsewhere"}, {"artifact_location", location}});
  write_experiment(synthetic_experiment("elsewhere") + secure_table("elsewhere", /*trusted=*/true));
  const ProcessResult r = plugtrain_as(kPassword, "run exp.toml");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::vector<std::string> said = lines_with(r.out, "not uploaded");
  ASSERT_EQ(said.size(), 1u) << r.out;
  EXPECT_NE(said[0].find(location), std::string::npos) << said[0];
  const json runs = read_back("elsewhere");
  ASSERT_EQ(runs.size(), 1u) << runs.dump();
  EXPECT_EQ(runs[0]["status"], "FINISHED");
  expect_metrics_equal_csv(runs[0], run_folder(dir_, "elsewhere", 0) / "metrics.csv");
}

// An artifact store of another kind (s3://, which MLflow's client here cannot list): said once,
// naming the URI; the run and its figures are on the server all the same (its REST API says).
TEST_F(MlflowSecureTest, FilesForAnS3ArtifactUriAreSaidOnceAndTheRunEndsOnTheServer) {
  const json made = server_->post_as(kUser, kPassword, "experiments/create",
                                     {{"name", "on-s3"}, {"artifact_location", "s3://plugtrain-nowhere/store"}});
  write_experiment(synthetic_experiment("on-s3") + secure_table("on-s3", /*trusted=*/true));
  const ProcessResult r = plugtrain_as(kPassword, "run exp.toml");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::vector<std::string> said = lines_with(r.out, "not uploaded");
  ASSERT_EQ(said.size(), 1u) << r.out;
  EXPECT_NE(said[0].find("s3://plugtrain-nowhere/store/"), std::string::npos) << said[0];
  const json found = server_->post_as(kUser, kPassword, "runs/search",
                                      {{"experiment_ids", {made["experiment_id"]}}, {"max_results", 10}});
  ASSERT_EQ(found["runs"].size(), 1u) << found.dump();
  EXPECT_EQ(found["runs"][0]["info"]["status"], "FINISHED");
  EXPECT_FALSE(found["runs"][0]["data"]["metrics"].empty()) << found.dump();
}

// A login the server knows, without the permission for the experiment (the admin's; the
// server's default permission is READ): one line naming 403 and the user; training goes on.
TEST_F(MlflowSecureTest, ALoginWithoutPermissionIsOneLineNamingTheUserAndTrainingGoesOn) {
  server_->post_as(kMlflowAdmin, kMlflowAdminPassword, "experiments/create", {{"name", "admins-only"}});
  write_experiment(synthetic_experiment("forbidden") + secure_table("admins-only", /*trusted=*/true));
  const ProcessResult r = plugtrain_as(kPassword, "run exp.toml");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::vector<std::string> said = lines_with(r.out, "HTTP 403");
  ASSERT_FALSE(said.empty()) << r.out;
  EXPECT_NE(said[0].find("user \"trainer\""), std::string::npos) << said[0];
  EXPECT_NE(said[0].find("Permission denied"), std::string::npos) << said[0];
  EXPECT_TRUE(fs::exists(run_folder(dir_, "forbidden", 0) / "summary.json"));
}

}  // namespace
