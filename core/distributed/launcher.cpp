#include "distributed/launcher.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <ostream>
#include <thread>
#include <utility>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "distributed/world.h"
#include "util/subprocess.h"

namespace plugtrain {

namespace {

// SIGINT / SIGTERM to the launcher are passed on to the workers, which then checkpoint and stop.
volatile sig_atomic_t g_forward_signal = 0;
void remember_signal(int sig) { g_forward_signal = sig; }

// While the workers run: SIGINT and SIGTERM are remembered for them instead of ending this process.
class ForwardedSignals {
 public:
  ForwardedSignals() {
    struct sigaction forward {};
    forward.sa_handler = remember_signal;
    sigemptyset(&forward.sa_mask);
    sigaction(SIGINT, &forward, &old_int_);
    sigaction(SIGTERM, &forward, &old_term_);
  }
  ~ForwardedSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  ForwardedSignals(const ForwardedSignals&) = delete;
  ForwardedSignals& operator=(const ForwardedSignals&) = delete;

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

// The variables torchrun would set for `rank`; the worker inherits the rest of this process's.
std::vector<std::pair<std::string, std::string>> rank_environment(int rank, int workers, int port) {
  return {{"RANK", std::to_string(rank)},
          {"WORLD_SIZE", std::to_string(workers)},
          {"LOCAL_RANK", std::to_string(rank)},
          {"LOCAL_WORLD_SIZE", std::to_string(workers)},
          {"MASTER_ADDR", "127.0.0.1"},
          {"MASTER_PORT", std::to_string(port)},
          {"TORCHELASTIC_USE_AGENT_STORE", "True"},
          {"PLUGTRAIN_LAUNCHED", "1"}};
}

}  // namespace

int free_local_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw DistributedError(std::string("cannot open a socket to find a free port: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    throw DistributedError("cannot find a free TCP port on 127.0.0.1: " + why);
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

namespace {

// The rendezvous store lives in the launcher, as under torchrun's agent: it outlives any worker,
// so the survivors of a failure can still learn from it which rank failed and why. Port 0: the
// system picks a free one, no race with other programs.
c10::intrusive_ptr<c10d::TCPStore> serve_rendezvous_store(std::chrono::milliseconds timeout) {
  try {
    c10d::TCPStoreOptions options;
    options.port = 0;
    options.isServer = true;
    options.waitWorkers = false;
    options.timeout = timeout;
    return c10::make_intrusive<c10d::TCPStore>("127.0.0.1", options);
  } catch (const std::exception& e) {
    throw DistributedError(std::string("cannot serve the rendezvous store on 127.0.0.1: ") + e.what());
  }
}

// Every rank started as a copy of this program: pid -> rank. When one cannot start, those
// started are killed.
std::map<pid_t, int> start_workers(const LaunchRequest& request, int port) {
  SpawnSpec worker;
  worker.argv = request.command;
  worker.program = "/proc/self/exe";  // this very program, whatever its path
  // Its own process group: a Ctrl-C reaches the launcher only, which passes it on once
  // (a second SIGINT would make a worker exit at once, without its checkpoint).
  worker.own_process_group = true;
  worker.death_signal = SIGKILL;  // the worker dies with the launcher, however the launcher ends
  worker.orphan_exit_code = 1;
  worker.exec_failure = "plugtrain: error: cannot start a worker process (execve failed)\n";
  worker.what = "worker process";
  std::map<pid_t, int> running;
  for (int rank = 0; rank < request.workers; ++rank) {
    worker.environment = rank_environment(rank, request.workers, port);
    Result<ChildProcess> started = spawn(worker);
    if (!started) {
      for (auto& [p, r] : running) send_signal(p, SIGKILL);
      throw DistributedError(started.why_not());
    }
    running[started.value().pid] = rank;
  }
  return running;
}

// Waits for the workers: passes a SIGINT/SIGTERM on to them once; after the first failure (or
// an interruption) gives the others `grace` to stop, then kills them. The exit code is the
// first failure's, 130 for an interruption they stopped on, else 0.
class WorkerWatch {
 public:
  WorkerWatch(std::map<pid_t, int> running, std::chrono::milliseconds grace, std::ostream& log)
      : running_(std::move(running)), grace_(grace), log_(log) {}

  int wait() {
    while (!running_.empty()) {
      if (g_forward_signal) pass_on_signal();
      const Reaped ended = reap_any();
      if (ended.no_children) break;
      if (ended.pid > 0 && running_.count(ended.pid)) {
        settle(ended);
        continue;
      }
      if ((failing_ || interrupted_) && std::chrono::steady_clock::now() >= kill_at_) kill_the_rest();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return result_;
  }

 private:
  void pass_on_signal() {
    for (auto& [p, r] : running_) send_signal(p, g_forward_signal);
    g_forward_signal = 0;
    interrupted_ = true;
    if (!failing_) kill_at_ = std::chrono::steady_clock::now() + grace_;  // a worker stuck for good
  }

  void settle(const Reaped& ended) {
    const int rank = running_[ended.pid];
    running_.erase(ended.pid);
    const ExitStatus& status = ended.status;
    // 130: the worker stopped on the SIGINT/SIGTERM passed on to it, with its checkpoint.
    if (interrupted_ && !status.signal && status.exit_code == 130) {
      result_ = result_ ? result_ : 130;
      return;
    }
    if (status.succeeded() || failing_) return;
    failing_ = true;
    result_ = status.shell_code();
    kill_at_ = std::chrono::steady_clock::now() + grace_;
    log_ << "plugtrain: error: rank " << rank << " (pid " << ended.pid << ") " << status.text()
         << (running_.empty() ? "" : "; waiting for the other ranks to stop") << "\n"
         << std::flush;
  }

  void kill_the_rest() {
    for (auto& [p, r] : running_) {
      log_ << "plugtrain: error: rank " << r << " (pid " << p << ") did not stop within " << grace_.count() / 1000.0
           << " s; killing it\n";
      send_signal(p, SIGKILL);
    }
    kill_at_ = std::chrono::steady_clock::now() + std::chrono::hours(1);
  }

  std::map<pid_t, int> running_;  // pid -> rank
  std::chrono::milliseconds grace_;
  std::ostream& log_;
  int result_ = 0;
  bool failing_ = false, interrupted_ = false;
  std::chrono::steady_clock::time_point kill_at_;
};

}  // namespace

int launch_local_workers(const LaunchRequest& request, std::ostream& log) {
  const c10::intrusive_ptr<c10d::TCPStore> store = serve_rendezvous_store(request.grace);
  const int port = store->getPort();
  const ForwardedSignals forwarded;
  const ReapableChildren reapable;  // an inherited SIG_IGN would make waitpid() find no child
  std::map<pid_t, int> running = start_workers(request, port);
  log << "ddp: started " << request.workers << " worker processes (rendezvous 127.0.0.1:" << port << "):";
  for (const auto& [pid, rank] : running) log << " rank " << rank << " pid " << pid << ";";
  log << "\n" << std::flush;
  return WorkerWatch(std::move(running), request.grace, log).wait();
}

}  // namespace plugtrain
