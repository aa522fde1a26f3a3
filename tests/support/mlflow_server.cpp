#include "support/mlflow_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <regex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "support/run_process.h"

namespace plugtrain::testing {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// The `mlflow` beside the tests' Python (the project's venv).
std::string mlflow_program() { return (fs::path(PLUGTRAIN_PYTHON).parent_path() / "mlflow").string(); }

// MLflow's authorization_function for the tests: its own basic auth, and bearer tokens as a
// team's proxy or single sign-on gives them (the tokens of tokens.json, {"token": "user"}).
constexpr const char* kTokenAuthModule = R"(import json, os
from flask import request
from werkzeug.datastructures import Authorization
from mlflow.server.auth import authenticate_request_basic_auth, make_basic_auth_response

TOKENS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tokens.json")


def token_or_basic():
    header = request.headers.get("Authorization", "")
    if not header.startswith("Bearer "):
        return authenticate_request_basic_auth()
    try:
        with open(TOKENS) as f:
            user = json.load(f).get(header[len("Bearer "):])
    except OSError:
        user = None
    return Authorization("basic", {"username": user}) if user else make_basic_auth_response()
)";

// MLflow's login app: its users in `folder`, an admin with a known password (MLflow ships none).
// Its environment is set in the server's process only.
void write_auth_config(const fs::path& folder) {
  std::ofstream(folder / "plugtrain_token_auth.py") << kTokenAuthModule;
  std::ofstream(folder / "basic_auth.ini")
      << "[mlflow]\ndefault_permission = READ\ndatabase_uri = sqlite:///" << (folder / "basic_auth.db").string()
      << "\nadmin_username = " << kMlflowAdmin << "\nadmin_password = " << kMlflowAdminPassword
      << "\nauthorization_function = plugtrain_token_auth:token_or_basic\n"
         // Each login's PBKDF2 check once a minute, not on every request (2 cores)
         "auth_cache_ttl_seconds = 60\n";
}

void set_auth_environment(const fs::path& folder) {
  ::setenv("MLFLOW_AUTH_CONFIG_PATH", (folder / "basic_auth.ini").c_str(), 1);
  ::setenv("MLFLOW_FLASK_SERVER_SECRET_KEY", "plugtrain-tests", 1);  // its CSRF check wants one
  ::setenv("PYTHONPATH", folder.c_str(), 1);                         // plugtrain_token_auth
}

// Forks `argv` with its output in `log`, in a process group of its own (one signal stops all).
pid_t spawn(const std::vector<std::string>& argv, const fs::path& log, const std::function<void()>& in_child = {}) {
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid > 0) return pid;
  ::setpgid(0, 0);
  const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  ::dup2(out, 1);
  ::dup2(out, 2);
  if (in_child) in_child();
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  ::_exit(127);
}

pid_t start_server(const fs::path& folder, int port, const fs::path& log, const MlflowServerOptions& options) {
  std::vector<std::string> argv = {mlflow_program(), "server", "--backend-store-uri",
                                   "sqlite:///" + (folder / "mlflow.db").string()};
  if (options.serve_artifacts) {
    argv.insert(argv.end(), {"--artifacts-destination", (folder / "artifacts").string()});
  } else {
    argv.insert(argv.end(), {"--no-serve-artifacts", "--default-artifact-root", (folder / "artifacts").string()});
  }
  if (options.basic_auth) argv.insert(argv.end(), {"--app-name", "basic-auth"});
  argv.insert(argv.end(), {"--host", "127.0.0.1", "--port", std::to_string(port), "--workers", "1"});
  if (options.basic_auth) write_auth_config(folder);
  return spawn(argv, log, [&] {
    // The job runner (huey, 7 processes) only serves MLflow's GenAI jobs: none here.
    ::setenv("MLFLOW_SERVER_ENABLE_JOB_EXECUTION", "false", 1);
    if (options.basic_auth) set_auth_environment(folder);
  });
}

// The port uvicorn logs ("Uvicorn running on http://127.0.0.1:36699"), 0 until it has.
int logged_port(const fs::path& log) {
  static const std::regex running("Uvicorn running on http://127\\.0\\.0\\.1:([0-9]+)");
  std::smatch m;
  const std::string text = slurp(log);
  return std::regex_search(text, m, running) ? std::stoi(m[1]) : 0;
}

sockaddr_in loopback(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(std::uint16_t(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

// `request` to 127.0.0.1:port, and the whole answer ("" when nothing listens).
std::string http_exchange(int port, const std::string& request) {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  if (s < 0) return "";
  sockaddr_in address = loopback(port);
  std::string reply;
  if (::connect(s, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
    if (::write(s, request.data(), request.size()) == ssize_t(request.size())) {
      char buffer[4096];
      ssize_t n;
      while ((n = ::read(s, buffer, sizeof buffer)) > 0) reply.append(buffer, std::size_t(n));
    }
  }
  ::close(s);
  return reply;
}

bool accepts(int port) {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address = loopback(port);
  const bool connected = ::connect(s, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(s);
  return connected;
}

int free_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address = loopback(0);
  socklen_t size = sizeof address;
  if (::bind(s, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(s, reinterpret_cast<sockaddr*>(&address), &size) != 0)
    throw std::runtime_error("no free port");
  ::close(s);
  return ntohs(address.sin_port);
}

std::string base64(const std::string& bytes) {
  static const char* const table = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    unsigned value = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) value |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) value |= static_cast<unsigned char>(bytes[i + 2]);
    out += table[(value >> 18) & 63];
    out += table[(value >> 12) & 63];
    out += i + 1 < bytes.size() ? table[(value >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? table[value & 63] : '=';
  }
  return out;
}

// Waits for `ready` while `pid` lives; an exit, or two minutes, is an error naming `log`.
void wait_until_ready(pid_t& pid, const fs::path& log, const std::string& what, const std::function<bool()>& ready) {
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  for (;;) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      pid = -1;
      throw std::runtime_error(what + " exited at start: " + slurp(log));
    }
    if (ready()) return;
    if (Clock::now() > deadline) throw std::runtime_error(what + " not ready: " + slurp(log));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

void stop(pid_t pid) {
  if (pid <= 0) return;
  ::kill(-pid, SIGTERM);
  ::waitpid(pid, nullptr, 0);
  ::kill(-pid, SIGKILL);  // a worker that outlived its parent
}

}  // namespace

bool mlflow_healthy(int port) {
  const std::string reply = http_exchange(port, "GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
  return reply.rfind("HTTP/1.1 200", 0) == 0 || reply.rfind("HTTP/1.0 200", 0) == 0;
}

MlflowServer::MlflowServer(const fs::path& folder, int port, MlflowServerOptions options)
    : port_(port), folder_(fs::absolute(folder)), log_(folder_ / "server.log") {
  fs::create_directories(folder_);
  pid_ = start_server(folder_, port, log_, options);
  // Ready when /health answers; a server that exits (a taken port, no mlflow) is an error at once.
  wait_until_ready(pid_, log_, "mlflow server", [this] {
    if (port_ == 0) port_ = logged_port(log_);
    return port_ != 0 && mlflow_healthy(port_);
  });
  uri_ = "http://127.0.0.1:" + std::to_string(port_);
}

void MlflowServer::kill_now() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

MlflowServer::~MlflowServer() { stop(pid_); }

nlohmann::json MlflowServer::post_as(const std::string& user, const std::string& password, const std::string& call,
                                     const nlohmann::json& body) const {
  const std::string text = body.dump();
  const std::string reply =
      http_exchange(port_, "POST /api/2.0/mlflow/" + call + " HTTP/1.0\r\nHost: 127.0.0.1\r\nAuthorization: Basic " +
                               base64(user + ":" + password) +
                               "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(text.size()) +
                               "\r\n\r\n" + text);
  const std::size_t end_of_head = reply.find("\r\n\r\n");
  if (reply.compare(0, 12, "HTTP/1.1 200") != 0 || end_of_head == std::string::npos)
    throw std::runtime_error(call + " as " + user + " failed: " + reply);
  return nlohmann::json::parse(reply.substr(end_of_head + 4));
}

void MlflowServer::add_user(const std::string& user, const std::string& password) const {
  post_as(kMlflowAdmin, kMlflowAdminPassword, "users/create", {{"username", user}, {"password", password}});
}

void MlflowServer::add_token(const std::string& token, const std::string& user) const {
  const fs::path file = folder_ / "tokens.json";
  nlohmann::json tokens = nlohmann::json::parse(slurp(file), nullptr, false);
  if (!tokens.is_object()) tokens = nlohmann::json::object();
  tokens[token] = user;
  std::ofstream(file.string() + ".tmp") << tokens.dump();
  fs::rename(file.string() + ".tmp", file);
}

std::string TlsFront::missing_tools() {
  std::string missing;
  if (std::system("command -v stunnel4 >/dev/null 2>&1") != 0) missing += "stunnel4 ";
  if (std::system("command -v openssl >/dev/null 2>&1") != 0) missing += "openssl ";
  return missing.empty() ? "" : missing + "(Debian packages; scripts/setup installs them)";
}

TlsFront::TlsFront(const fs::path& folder, int backend_port) {
  const fs::path dir = fs::absolute(folder);
  fs::create_directories(dir);
  certificate_ = dir / "certificate.pem";
  const fs::path key = dir / "key.pem";
  const ProcessResult made = run_process(
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=127.0.0.1 "
      "-addext subjectAltName=IP:127.0.0.1 -keyout " +
      shell_quote(key.string()) + " -out " + shell_quote(certificate_.string()));
  if (made.exit_code != 0) throw std::runtime_error("openssl req failed: " + made.out);
  const int port = free_port();
  const fs::path config = dir / "stunnel.conf";
  std::ofstream(config) << "foreground = yes\npid =\n[mlflow]\naccept = 127.0.0.1:" << port
                        << "\nconnect = 127.0.0.1:" << backend_port << "\ncert = " << certificate_.string()
                        << "\nkey = " << key.string() << "\n";
  const fs::path log = dir / "stunnel.log";
  pid_ = spawn({"stunnel4", config.string()}, log);
  wait_until_ready(pid_, log, "stunnel4", [port] { return accepts(port); });
  uri_ = "https://127.0.0.1:" + std::to_string(port);
}

TlsFront::~TlsFront() { stop(pid_); }

nlohmann::json mlflow_client_json(const std::string& uri, const std::string& experiment, const std::string& env) {
  const std::string script = std::string(PLUGTRAIN_SOURCE_DIR) + "/tests/python/mlflow_readback.py";
  const ProcessResult r = run_process((env.empty() ? "" : "env " + env + " ") + shell_quote(PLUGTRAIN_PYTHON) + " " +
                                          shell_quote(script) + " " + shell_quote(uri) + " " + shell_quote(experiment),
                                      /*merge_stderr=*/false);
  if (r.exit_code != 0) throw std::runtime_error("mlflow_readback.py failed: " + r.out);
  return nlohmann::json::parse(r.out);
}

}  // namespace plugtrain::testing
