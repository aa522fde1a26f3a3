// The MLflow tracking server's REST calls this plugin makes (REST API 2.0, checked against
// mlflow 3.17.2: /work/notes/issue52_research.md in the history).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "http_client.h"

namespace plugtrain::mlflow {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

// What creating the run on the server takes; keys already sanitized, values cut.
struct RunSetup {
  std::string experiment_name;
  std::string run_name;
  std::int64_t start_time_ms = 0;
  KeyValues tags;
  KeyValues params;
};

// A run as the server has it.
struct ServerRun {
  std::string run_id;
  std::string artifact_uri;  // "mlflow-artifacts:/<exp>/<run>/artifacts" when the server serves artifacts
};

class MlflowClient {
 public:
  MlflowClient(std::string uri, HttpSettings http, const std::atomic<bool>* abort);

  const std::string& uri() const { return uri_; }
  // The UI's page of a run.
  static std::string page_of(const std::string& uri, const std::string& experiment_id, const std::string& run_id);

  // The experiment's id by name; created when missing.
  Outcome experiment_id(const std::string& name, std::string& id);
  Outcome create_run(const std::string& experiment_id, const RunSetup& setup, ServerRun& run);
  // The experiment's run whose tag `key` is `value`; run.run_id stays "" when there is none.
  Outcome find_run(const std::string& experiment_id, const std::string& key, const std::string& value, ServerRun& run);
  Outcome get_run(const std::string& run_id, ServerRun& run);
  // status RUNNING, FINISHED, FAILED or KILLED; end_time_ms 0 sends none. `run` gets the run's info.
  Outcome update_run(const std::string& run_id, const std::string& status, std::int64_t end_time_ms, ServerRun& run);
  // params[first, first + count), at most 100.
  Outcome log_params(const std::string& run_id, const KeyValues& params, std::size_t first, std::size_t count);
  // `metrics`: the JSON objects of at most 1000 metrics, comma-separated (journal lines).
  Outcome log_metrics(const std::string& run_id, const std::string& metrics);
  Outcome upload_artifact(const std::string& artifact_uri, const std::string& name, const std::string& path);

 private:
  std::string api(const std::string& call) const { return uri_ + "/api/2.0/mlflow/" + call; }
  Outcome fetch_experiment(const std::string& name, std::string& id);

  std::string uri_;  // no trailing "/"
  HttpClient http_;
};

// Where the tracking server at `tracking_uri` takes a file for the run whose artifact_uri is
// `artifact_uri`; "" when the server does not serve that run's artifacts.
std::string artifact_upload_url(const std::string& tracking_uri, const std::string& artifact_uri,
                                const std::string& name);

}  // namespace plugtrain::mlflow
