// A real MLflow tracking server for the tests (`mlflow server` from the project's venv, which
// scripts/test installs): a SQLite store and an artifact folder in a scratch folder, on a free
// localhost port, started in the constructor (ready when it returns: GET /health answers) and
// stopped (SIGTERM, then reaped) in the destructor. MLflow's own Python client reads back what a
// run sent (mlflow_client_json).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace plugtrain::testing {

class MlflowServer {
 public:
  // `port` 0: a free one (uvicorn binds it and logs which). A restart passes the old port.
  explicit MlflowServer(const std::filesystem::path& folder, int port = 0);
  ~MlflowServer();
  MlflowServer(const MlflowServer&) = delete;
  MlflowServer& operator=(const MlflowServer&) = delete;

  const std::string& uri() const { return uri_; }
  int port() const { return port_; }
  // Kills it at once (SIGKILL, as a crashed server), and reaps it.
  void kill_now();

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string uri_;
  std::filesystem::path log_;
};

// GET http://127.0.0.1:port/health answered "OK".
bool mlflow_healthy(int port);

// What MLflow's Python client (MlflowClient) reads of every run of `experiment`
// (tests/python/mlflow_readback.py): [{"id","name","status","parent","params":{},"tags":{},
// "metrics":{key:[[step,value,timestamp],...]},"artifacts":[paths]}], oldest first.
nlohmann::json mlflow_client_json(const std::string& uri, const std::string& experiment);

}  // namespace plugtrain::testing
