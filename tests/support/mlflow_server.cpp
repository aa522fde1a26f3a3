#include "support/mlflow_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <stdexcept>
#include <thread>

#include "support/run_process.h"

namespace plugtrain::testing {

namespace {

namespace fs = std::filesystem;

// The `mlflow` beside the tests' Python (the project's venv).
std::string mlflow_program() { return (fs::path(PLUGTRAIN_PYTHON).parent_path() / "mlflow").string(); }

pid_t start_server(const fs::path& folder, int port, const fs::path& log) {
  const std::string store = "sqlite:///" + (folder / "mlflow.db").string();
  const std::string artifacts = (folder / "artifacts").string();
  const std::string port_text = std::to_string(port);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid > 0) return pid;
  ::setpgid(0, 0);  // its workers in its group: one signal stops them all
  const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  ::dup2(out, 1);
  ::dup2(out, 2);
  // The job runner (huey, 7 processes) only serves MLflow's GenAI jobs: none here.
  ::setenv("MLFLOW_SERVER_ENABLE_JOB_EXECUTION", "false", 1);
  const std::string program = mlflow_program();
  ::execl(program.c_str(), program.c_str(), "server", "--backend-store-uri", store.c_str(), "--artifacts-destination",
          artifacts.c_str(), "--host", "127.0.0.1", "--port", port_text.c_str(), "--workers", "1", (char*)nullptr);
  ::_exit(127);
}

// The port uvicorn logs ("Uvicorn running on http://127.0.0.1:36699"), 0 until it has.
int logged_port(const fs::path& log) {
  static const std::regex running("Uvicorn running on http://127\\.0\\.0\\.1:([0-9]+)");
  std::smatch m;
  const std::string text = slurp(log);
  return std::regex_search(text, m, running) ? std::stoi(m[1]) : 0;
}

}  // namespace

bool mlflow_healthy(int port) {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  if (s < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(std::uint16_t(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string reply;
  if (::connect(s, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
    const std::string request = "GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (::write(s, request.data(), request.size()) == ssize_t(request.size())) {
      char buffer[512];
      ssize_t n;
      while ((n = ::read(s, buffer, sizeof buffer)) > 0) reply.append(buffer, std::size_t(n));
    }
  }
  ::close(s);
  return reply.rfind("HTTP/1.1 200", 0) == 0 || reply.rfind("HTTP/1.0 200", 0) == 0;
}

MlflowServer::MlflowServer(const fs::path& folder, int port) : port_(port), log_(folder / "server.log") {
  fs::create_directories(folder);
  pid_ = start_server(folder, port, log_);
  // Ready when /health answers; a server that exits (a taken port, no mlflow) is an error at once.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (;;) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("mlflow server exited at start: " + slurp(log_));
    }
    if (port_ == 0) port_ = logged_port(log_);
    if (port_ != 0 && mlflow_healthy(port_)) break;
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("mlflow server not ready: " + slurp(log_));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  uri_ = "http://127.0.0.1:" + std::to_string(port_);
}

void MlflowServer::kill_now() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

MlflowServer::~MlflowServer() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGTERM);
  ::waitpid(pid_, nullptr, 0);
  ::kill(-pid_, SIGKILL);  // a worker that outlived its parent
}

nlohmann::json mlflow_client_json(const std::string& uri, const std::string& experiment) {
  const std::string script = std::string(PLUGTRAIN_SOURCE_DIR) + "/tests/python/mlflow_readback.py";
  const ProcessResult r = run_process(shell_quote(PLUGTRAIN_PYTHON) + " " + shell_quote(script) + " " +
                                          shell_quote(uri) + " " + shell_quote(experiment),
                                      /*merge_stderr=*/false);
  if (r.exit_code != 0) throw std::runtime_error("mlflow_readback.py failed: " + r.out);
  return nlohmann::json::parse(r.out);
}

}  // namespace plugtrain::testing
