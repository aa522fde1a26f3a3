// The MLflow tracking server's REST calls (mlflow_client.h).
#include "mlflow_client.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "mlflow_format.h"

namespace plugtrain::mlflow {

namespace {

using nlohmann::json;

// The answer's JSON; a 200 whose body is not JSON is no MLflow server's.
Outcome parse_reply(Outcome reply, json& parsed) {
  if (!reply.ok()) return reply;
  parsed = json::parse(reply.body, nullptr, false);
  if (!parsed.is_object()) return Outcome::failed(Outcome::Kind::permanent, "the answer is not MLflow's JSON");
  return reply;
}

std::string error_code(const Outcome& reply) {
  const json parsed = json::parse(reply.body, nullptr, false);
  if (parsed.is_object() && parsed.contains("error_code") && parsed["error_code"].is_string()) {
    return parsed["error_code"].get<std::string>();
  }
  return "";
}

ServerRun server_run_from(const json& info) {
  ServerRun run;
  run.run_id = info.value("run_id", std::string());
  run.artifact_uri = info.value("artifact_uri", std::string());
  return run;
}

json key_values_json(const KeyValues& pairs, std::size_t first, std::size_t count) {
  json list = json::array();
  for (std::size_t i = first; i < first + count && i < pairs.size(); ++i) {
    list.push_back({{"key", pairs[i].first}, {"value", pairs[i].second}});
  }
  return list;
}

}  // namespace

MlflowClient::MlflowClient(std::string uri, HttpSettings http, const std::atomic<bool>* abort)
    : uri_(std::move(uri)), http_(std::move(http), abort) {
  while (!uri_.empty() && uri_.back() == '/') uri_.pop_back();
}

std::string MlflowClient::page_of(const std::string& uri, const std::string& experiment_id, const std::string& run_id) {
  return uri + "/#/experiments/" + experiment_id + "/runs/" + run_id;
}

Outcome MlflowClient::fetch_experiment(const std::string& name, std::string& id) {
  json parsed;
  Outcome reply =
      parse_reply(http_.get(api("experiments/get-by-name?experiment_name=" + percent_encode(name))), parsed);
  if (!reply.ok()) return reply;
  const json& experiment = parsed.value("experiment", json::object());
  if (experiment.value("lifecycle_stage", std::string()) == "deleted") {
    return Outcome::failed(Outcome::Kind::permanent,
                           "experiment \"" + name + "\" is deleted (restore it, or name another experiment)");
  }
  id = experiment.value("experiment_id", std::string());
  return reply;
}

Outcome MlflowClient::experiment_id(const std::string& name, std::string& id) {
  Outcome found = fetch_experiment(name, id);
  if (found.ok() || found.status != 404) return found;
  json parsed;
  Outcome created = parse_reply(http_.post_json(api("experiments/create"), json_text({{"name", name}})), parsed);
  if (created.ok()) {
    id = parsed.value("experiment_id", std::string());
    return created;
  }
  // Another process created it first.
  if (error_code(created) == "RESOURCE_ALREADY_EXISTS") return fetch_experiment(name, id);
  return created;
}

Outcome MlflowClient::create_run(const std::string& experiment_id, const RunSetup& setup, ServerRun& run) {
  const json body = {{"experiment_id", experiment_id},
                     {"run_name", setup.run_name},
                     {"start_time", setup.start_time_ms},  // left out, the server stores 0
                     {"tags", key_values_json(setup.tags, 0, setup.tags.size())}};
  json parsed;
  Outcome reply = parse_reply(http_.post_json(api("runs/create"), json_text(body)), parsed);
  if (reply.ok()) run = server_run_from(parsed.value("run", json::object()).value("info", json::object()));
  return reply;
}

Outcome MlflowClient::find_run(const std::string& experiment_id, const std::string& key, const std::string& value,
                               ServerRun& run) {
  const json body = {
      {"experiment_ids", {experiment_id}}, {"filter", "tags.`" + key + "` = '" + value + "'"}, {"max_results", 1}};
  json parsed;
  Outcome reply = parse_reply(http_.post_json(api("runs/search"), json_text(body)), parsed);
  run = ServerRun();
  if (reply.ok() && parsed.contains("runs") && parsed["runs"].is_array() && !parsed["runs"].empty()) {
    run = server_run_from(parsed["runs"][0].value("info", json::object()));
  }
  return reply;
}

Outcome MlflowClient::get_run(const std::string& run_id, ServerRun& run) {
  json parsed;
  Outcome reply = parse_reply(http_.get(api("runs/get?run_id=" + percent_encode(run_id))), parsed);
  if (reply.ok()) run = server_run_from(parsed.value("run", json::object()).value("info", json::object()));
  return reply;
}

Outcome MlflowClient::update_run(const std::string& run_id, const std::string& status, std::int64_t end_time_ms,
                                 ServerRun& run) {
  json body = {{"run_id", run_id}, {"status", status}};
  if (end_time_ms > 0) body["end_time"] = end_time_ms;
  json parsed;
  Outcome reply = parse_reply(http_.post_json(api("runs/update"), json_text(body)), parsed);
  if (reply.ok()) run = server_run_from(parsed.value("run_info", json::object()));
  return reply;
}

Outcome MlflowClient::log_params(const std::string& run_id, const KeyValues& params, std::size_t first,
                                 std::size_t count) {
  const json body = {{"run_id", run_id}, {"params", key_values_json(params, first, std::min<std::size_t>(count, 100))}};
  return http_.post_json(api("runs/log-batch"), json_text(body));
}

Outcome MlflowClient::log_metrics(const std::string& run_id, const std::string& metrics) {
  // The journal's bytes as they are: a resend is byte-identical, which the server deduplicates.
  return http_.post_json(api("runs/log-batch"), "{\"run_id\":" + json_text(run_id) + ",\"metrics\":[" + metrics + "]}");
}

Outcome MlflowClient::upload_artifact(const std::string& artifact_uri, const std::string& name,
                                      const std::string& path) {
  const std::string url = artifact_upload_url(uri_, artifact_uri, name);
  if (url.empty()) return Outcome::failed(Outcome::Kind::permanent, "the server does not serve this run's artifacts");
  return http_.put_file(url, path);
}

std::string artifact_upload_url(const std::string& tracking_uri, const std::string& artifact_uri,
                                const std::string& name) {
  static const std::string scheme = "mlflow-artifacts:";
  if (artifact_uri.compare(0, scheme.size(), scheme) != 0) return "";
  std::string path = artifact_uri.substr(scheme.size());
  // "mlflow-artifacts://host:port/x" names a host; the tracking server serves it all the same.
  if (path.compare(0, 2, "//") == 0) {
    const std::size_t slash = path.find('/', 2);
    path = slash == std::string::npos ? "" : path.substr(slash);
  }
  while (!path.empty() && path.front() == '/') path.erase(0, 1);
  while (!path.empty() && path.back() == '/') path.pop_back();
  const std::string file = url_path(name);
  if (file.empty()) return "";
  std::string base = tracking_uri;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base + "/api/2.0/mlflow-artifacts/artifacts/" + (path.empty() ? "" : path + "/") + file;
}

}  // namespace plugtrain::mlflow
