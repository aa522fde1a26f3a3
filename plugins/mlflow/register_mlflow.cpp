// The bundled MLflow plugin: registers the "mlflow" logger, switched on by an experiment's
// [logging.mlflow] table. Its factory checks the options and touches no network.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>

#include "plugtrain/logger.h"

#include "mlflow_format.h"
#include "mlflow_logger.h"

namespace {

using plugtrain::OptionRule;
using plugtrain::OptionType;

bool starts_with_scheme(const std::string& uri, const std::string& scheme) {
  if (uri.size() <= scheme.size()) return false;  // a scheme and no host
  for (std::size_t i = 0; i < scheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(uri[i])) != scheme[i]) return false;
  }
  return true;
}

// The tracking server: the option, else MLFLOW_TRACKING_URI (as MLflow's own clients do).
std::string tracking_uri(const plugtrain::Options& options) {
  static const std::string hint =
      "plugtrain logs to an MLflow server (mlflow server --port 5000: uri = \"http://127.0.0.1:5000\")";
  std::string uri = options.string("uri");
  std::string named = "\"" + uri + "\"";
  if (uri.empty()) {
    const char* from_environment = std::getenv("MLFLOW_TRACKING_URI");
    uri = from_environment != nullptr ? from_environment : "";
    named = "MLFLOW_TRACKING_URI \"" + uri + "\"";
  }
  if (uri.empty()) throw std::invalid_argument("logging.mlflow.uri: not set, nor is MLFLOW_TRACKING_URI; " + hint);
  if (!starts_with_scheme(uri, "http://") && !starts_with_scheme(uri, "https://")) {
    throw std::invalid_argument("logging.mlflow.uri: " + named + " is not an http(s) URL; " + hint);
  }
  while (uri.back() == '/') uri.pop_back();
  return uri;
}

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

// "https://me:secret@host" is taken apart: the URI without its user (it is kept in state.json
// and said in lines), the user and password for the login.
plugtrain::mlflow::Login take_user_from(std::string& uri) {
  plugtrain::mlflow::Login login;
  const std::size_t host = uri.find("://") + 3;
  const std::size_t end = std::min(uri.find('/', host), uri.size());
  const std::size_t at = uri.rfind('@', end - 1);
  if (at == std::string::npos || at < host) return login;
  const std::string user = uri.substr(host, at - host);
  const std::size_t colon = user.find(':');
  login.user = plugtrain::mlflow::percent_decode(user.substr(0, colon));
  if (colon != std::string::npos) login.password = plugtrain::mlflow::percent_decode(user.substr(colon + 1));
  uri.erase(host, at + 1 - host);
  return login;
}

// Who the requests go as: MLflow's own variables, else the URI's user.
plugtrain::mlflow::Login login_for(plugtrain::mlflow::Login from_uri) {
  plugtrain::mlflow::Login login;
  login.token = environment("MLFLOW_TRACKING_TOKEN");
  login.user = environment("MLFLOW_TRACKING_USERNAME");
  login.password = environment("MLFLOW_TRACKING_PASSWORD");
  if (login.token.empty() && login.user.empty()) return from_uri;
  return login;
}

// The certificates to trust: the option, else MLFLOW_TRACKING_SERVER_CERT_PATH (as MLflow's own
// clients); a file that cannot be read is an error before any work.
std::string ca_file(const plugtrain::Options& options) {
  std::string file = options.string("ca_file");
  std::string named = "logging.mlflow.ca_file: \"" + file + "\"";
  if (file.empty()) {
    file = environment("MLFLOW_TRACKING_SERVER_CERT_PATH");
    named = "MLFLOW_TRACKING_SERVER_CERT_PATH \"" + file + "\"";
  }
  if (file.empty()) return file;
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(file, error);
  if (!std::filesystem::is_regular_file(absolute, error) || !std::ifstream(absolute)) {
    throw std::invalid_argument(named +
                                " is not a readable file (the PEM certificate of the server or of the "
                                "authority that signed it)");
  }
  return absolute.string();
}

std::unique_ptr<plugtrain::Logger> make_mlflow_logger(const plugtrain::Options& options) {
  plugtrain::mlflow::MlflowOptions resolved;
  resolved.uri = tracking_uri(options);
  resolved.http.login = login_for(take_user_from(resolved.uri));
  resolved.http.ca_file = ca_file(options);
  resolved.http.insecure_tls = environment("MLFLOW_TRACKING_INSECURE_TLS") == "true";  // MLflow's literal
  resolved.experiment = options.string("experiment");
  resolved.run_name = options.string("run_name");
  resolved.http.timeout_seconds = options.real("timeout_seconds");
  resolved.flush_seconds = options.real("flush_seconds");
  resolved.artifacts = options.boolean("artifacts");
  return std::make_unique<plugtrain::mlflow::MlflowLogger>(std::move(resolved));
}

plugtrain::LoggerSpec mlflow_spec() {
  return {"mlflow",
          "a run's figures, params and files to an MLflow tracking server",
          {{"uri", OptionType::string, std::string(),
            "the tracking server, http(s)://host:port; \"\": the environment's MLFLOW_TRACKING_URI"},
           {"experiment", OptionType::string, std::string(), "the MLflow experiment; \"\": the run's experiment name"},
           {"run_name", OptionType::string, std::string(), "the MLflow run's name; \"\": the run's name"},
           {"ca_file", OptionType::string, std::string(),
            "PEM certificate(s) to trust for an https server (its own, or its authority's); \"\": "
            "MLFLOW_TRACKING_SERVER_CERT_PATH, else the system's"},
           {"timeout_seconds", OptionType::real, 5.0, "one request's limit, connecting included"},
           {"flush_seconds", OptionType::real, 10.0,
            "how long the run's end waits for what is queued to be sent (the rest: plugtrain send-logs)"},
           {"artifacts", OptionType::boolean, true,
            "upload the run's files (summary, metrics, exported weights), or write them where the run's artifact "
            "URI is a folder"}},
          make_mlflow_logger};
}

void register_mlflow(plugtrain::Registrar& host) {
  plugtrain::LoggerSpec spec = mlflow_spec();
  spec.rules = {OptionRule("timeout_seconds").above(0), OptionRule("flush_seconds").at_least(0)};
  host.add_logger(std::move(spec));
}

}  // namespace

PLUGTRAIN_PLUGIN(register_mlflow, PLUGTRAIN_KIND_LOGGERS, "mlflow", "1.0.0", "logs runs to an MLflow tracking server")
