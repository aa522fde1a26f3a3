// A real MLflow tracking server for the tests (`mlflow server` from the project's venv, which
// scripts/test installs): a SQLite store and an artifact folder in a scratch folder, on a free
// localhost port, started in the constructor (ready when it returns: GET /health answers) and
// stopped (SIGTERM, then reaped) in the destructor. MLflow's own Python client reads back what a
// run sent (mlflow_client_json). As teams run it: behind a TLS terminator (TlsFront), with
// MLflow's login (basic auth), and with artifacts that clients write to a folder themselves.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace plugtrain::testing {

struct MlflowServerOptions {
  // `--app-name basic-auth`: every request needs a login, MLflow's basic auth or a bearer token
  // (add_token); the admin is kMlflowAdmin with kMlflowAdminPassword, its users kept in the
  // server's folder.
  bool basic_auth = false;
  // false: `--no-serve-artifacts --default-artifact-root <folder>/artifacts`; a run's artifact URI
  // is then that folder's path, and clients write the files there themselves.
  bool serve_artifacts = true;
};

inline constexpr const char* kMlflowAdmin = "admin";
inline constexpr const char* kMlflowAdminPassword = "admin-password-for-tests";

class MlflowServer {
 public:
  // `port` 0: a free one (uvicorn binds it and logs which). A restart passes the old port.
  explicit MlflowServer(const std::filesystem::path& folder, int port = 0, MlflowServerOptions options = {});
  ~MlflowServer();
  MlflowServer(const MlflowServer&) = delete;
  MlflowServer& operator=(const MlflowServer&) = delete;

  const std::string& uri() const { return uri_; }
  int port() const { return port_; }
  // Where the run's files go when the server does not serve artifacts.
  std::filesystem::path artifact_root() const { return folder_ / "artifacts"; }
  // Kills it at once (SIGKILL, as a crashed server), and reaps it.
  void kill_now();
  // POST of `body` to the REST API ("users/create") as `user`; the answer's JSON. Throws with
  // the server's answer unless it is 200.
  nlohmann::json post_as(const std::string& user, const std::string& password, const std::string& call,
                         const nlohmann::json& body) const;
  // A user of a basic-auth server, made by the admin through MLflow's REST API.
  void add_user(const std::string& user, const std::string& password) const;
  // A bearer token (Authorization: Bearer) a basic-auth server takes as `user`'s login.
  void add_token(const std::string& token, const std::string& user) const;

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string uri_;
  std::filesystem::path folder_;
  std::filesystem::path log_;
};

// stunnel (Debian's stunnel4) in front of a server's port: https://127.0.0.1:<port of its own>,
// with a self-signed certificate for 127.0.0.1 made by the openssl CLI. Ready when its port
// accepts; stopped in the destructor.
class TlsFront {
 public:
  TlsFront(const std::filesystem::path& folder, int backend_port);
  ~TlsFront();
  TlsFront(const TlsFront&) = delete;
  TlsFront& operator=(const TlsFront&) = delete;

  const std::string& uri() const { return uri_; }
  // The certificate (PEM) a client must trust.
  const std::filesystem::path& certificate() const { return certificate_; }
  // "" when stunnel4 and openssl are here, else what is missing.
  static std::string missing_tools();

 private:
  pid_t pid_ = -1;
  std::string uri_;
  std::filesystem::path certificate_;
};

// GET http://127.0.0.1:port/health answered "OK".
bool mlflow_healthy(int port);

// What MLflow's Python client (MlflowClient) reads of every run of `experiment`
// (tests/python/mlflow_readback.py): [{"id","name","status","parent","params":{},"tags":{},
// "metrics":{key:[[step,value,timestamp],...]},"artifacts":[paths]}], oldest first. `env`
// ("NAME=value ...") for the client: MLFLOW_TRACKING_USERNAME, MLFLOW_TRACKING_SERVER_CERT_PATH.
nlohmann::json mlflow_client_json(const std::string& uri, const std::string& experiment, const std::string& env = "");

}  // namespace plugtrain::testing
