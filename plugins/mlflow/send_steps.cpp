// The steps of the MLflow sender's pass (sender.h): each sends what is left of its kind and
// records in the run folder what the server acknowledged.
#include <filesystem>
#include <optional>

#include "journal.h"
#include "local_artifacts.h"
#include "mlflow_format.h"
#include "sender.h"

namespace plugtrain::mlflow {

namespace {

constexpr std::size_t kMetricsPerBatch = 1000;   // MLflow's log-batch limit
constexpr std::size_t kBatchBytes = 900 * 1024;  // under the 1 MB some servers enforce
constexpr std::size_t kParamsPerBatch = 100;

// A refusal with what was refused, for the line that reports it. (A failure that may pass is
// reported as the server being unreachable, which says enough; one with no answer, such as an
// untrusted certificate, is about the server, not what was sent.)
Outcome while_sending(Outcome outcome, const std::string& what) {
  if (outcome.kind == Outcome::Kind::permanent && outcome.status != 0) outcome.why = what + " (" + outcome.why + ")";
  return outcome;
}

bool served_by_tracking_server(const std::string& artifact_uri) {
  return artifact_uri.compare(0, 17, "mlflow-artifacts:") == 0;
}

}  // namespace

Outcome Sender::ensure_run() {
  const KeptState state = this->state();
  if (state.run_id.empty()) return create_run();
  if (!reopen_) return Outcome();
  ServerRun run;
  Outcome reply = client_.update_run(state.run_id, "RUNNING", 0, run);
  if (!reply.ok()) return while_sending(reply, "run " + state.run_id);
  reopen_ = false;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!run.artifact_uri.empty()) state_.artifact_uri = run.artifact_uri;
  files_.write_state(state_);
  return reply;
}

// runs/create is not idempotent: when an earlier try may have created the run (its answer was
// lost), the run is looked up by our plugtrain.run_uuid tag before a second one is made.
Outcome Sender::create_run() {
  KeptState state = this->state();
  if (state.experiment_id.empty()) {
    Outcome reply = client_.experiment_id(setup_.experiment_name, state.experiment_id);
    if (!reply.ok()) return while_sending(reply, "experiment \"" + setup_.experiment_name + "\"");
    std::lock_guard<std::mutex> lock(mutex_);
    state_.experiment_id = state.experiment_id;
    files_.write_state(state_);
  }
  ServerRun run;
  if (maybe_created_) {
    Outcome found = client_.find_run(state.experiment_id, "plugtrain.run_uuid", state.run_uuid, run);
    if (!found.ok()) return while_sending(found, "runs/search");
  }
  if (run.run_id.empty()) {
    maybe_created_ = true;
    Outcome created = client_.create_run(state.experiment_id, setup_, run);
    if (!created.ok()) return while_sending(created, "runs/create");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  state_.run_id = run.run_id;
  state_.artifact_uri = run.artifact_uri;
  files_.write_state(state_);
  return Outcome();
}

Outcome Sender::send_params() {
  const KeptState state = this->state();
  if (state.params_sent) return Outcome();
  while (params_done_ < setup_.params.size()) {
    Outcome reply = client_.log_params(state.run_id, setup_.params, params_done_, kParamsPerBatch);
    if (!reply.ok()) return while_sending(reply, "the params");
    params_done_ += kParamsPerBatch;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  state_.params_sent = true;
  files_.write_state(state_);
  return Outcome();
}

Outcome Sender::send_metrics() {
  const std::string run_id = state().run_id;
  while (true) {
    const JournalBatch batch = read_journal_batch(files_.journal(), sent_, kMetricsPerBatch, kBatchBytes);
    if (batch.end_offset == sent_) return Outcome();
    if (batch.count > 0) {
      Outcome reply = client_.log_metrics(run_id, batch.metrics);
      if (!reply.ok()) return while_sending(reply, "the figures");
    }
    sent_ = batch.end_offset;
    files_.write_sent(sent_);
    figures_sent_ += batch.count;
  }
}

Outcome Sender::send_artifacts() {
  while (true) {
    PendingArtifact next;
    KeptState state;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (artifacts_.empty()) return Outcome();
      next = artifacts_.front();
      state = state_;
    }
    if (state.artifact_uri.empty()) {
      ServerRun run;
      Outcome reply = client_.get_run(state.run_id, run);
      if (!reply.ok()) return while_sending(reply, "run " + state.run_id);
      std::lock_guard<std::mutex> lock(mutex_);
      state_.artifact_uri = state.artifact_uri = run.artifact_uri;
    }
    if (state.artifacts_unserved) return drop_artifacts("");
    if (served_by_tracking_server(state.artifact_uri)) {
      Outcome reply = upload(next);
      if (!reply.ok()) return reply;
      continue;
    }
    const std::optional<std::filesystem::path> folder = local_artifact_folder(state.artifact_uri);
    if (!folder) {
      return drop_artifacts("artifact_uri " + state.artifact_uri + " is neither served by " + client_.uri() +
                            " (`mlflow server` without --no-serve-artifacts) nor a folder on this machine: the "
                            "run's files are not uploaded");
    }
    const std::string failed = write_local(next, *folder);
    if (!failed.empty()) {
      return drop_artifacts("artifact_uri " + state.artifact_uri + " is a folder this machine cannot write (" + failed +
                            "): the run's files are not uploaded");
    }
  }
}

// Where the run's artifact URI is a folder here: the file written there, as MLflow's client does.
std::string Sender::write_local(const PendingArtifact& artifact, const std::filesystem::path& folder) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(artifact.path, error)) {
    say_(artifact.path + " is gone: not uploaded");
    drop_artifact(artifact);
    return "";
  }
  if (url_path(artifact.name).empty()) {
    say_("\"" + artifact.name + "\" names no file inside the run: not uploaded");
    drop_artifact(artifact);
    return "";
  }
  const std::string failed = write_local_artifact(folder, artifact.name, artifact.path);
  if (!failed.empty()) return failed;
  drop_artifact(artifact);
  ++files_sent_;
  return "";
}

// The run's files can go nowhere: said once (`line`, "" once said), dropped, and remembered.
Outcome Sender::drop_artifacts(const std::string& line) {
  if (!said_unserved_ && !line.empty()) say_(line);
  said_unserved_ = true;
  std::lock_guard<std::mutex> lock(mutex_);
  state_.artifacts_unserved = true;
  artifacts_.clear();
  files_.write_state(state_);
  files_.write_artifacts(artifacts_);
  return Outcome();
}

Outcome Sender::upload(const PendingArtifact& artifact) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(artifact.path, error)) {
    say_(artifact.path + " is gone: not uploaded");
    drop_artifact(artifact);
    return Outcome();
  }
  const std::string url = artifact_upload_url(client_.uri(), state().artifact_uri, artifact.name);
  if (url.empty()) {
    say_("\"" + artifact.name + "\" names no file inside the run: not uploaded");
    drop_artifact(artifact);
    return Outcome();
  }
  Outcome reply = client_.upload_artifact(state().artifact_uri, artifact.name, artifact.path);
  if (!reply.ok()) return while_sending(reply, "file " + artifact.name);
  drop_artifact(artifact);
  ++files_sent_;
  return reply;
}

void Sender::drop_artifact(const PendingArtifact& artifact) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = artifacts_.begin(); it != artifacts_.end(); ++it) {
    if (it->path == artifact.path && it->name == artifact.name) {
      artifacts_.erase(it);
      break;
    }
  }
  files_.write_artifacts(artifacts_);
}

Outcome Sender::send_end() {
  std::string run_id, status;
  std::int64_t end_time = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (state_.end.empty() || end_sent_) return Outcome();
    run_id = state_.run_id;
    status = state_.end;
    end_time = state_.end_time;
  }
  ServerRun run;
  Outcome reply = client_.update_run(run_id, status, end_time, run);
  if (!reply.ok()) return while_sending(reply, "the run's end");
  std::lock_guard<std::mutex> lock(mutex_);
  if (state_.end == status && state_.end_time == end_time) end_sent_ = true;
  return reply;
}

}  // namespace plugtrain::mlflow
