#include "distributed/launcher.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <ostream>
#include <thread>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "distributed/world.h"

namespace plugtrain {

namespace {

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = sigabbrev_np(sig);
    return std::string("was killed by signal ") + std::to_string(sig) + (name ? std::string(" (SIG") + name + ")" : "");
  }
  return "exited with code " + std::to_string(WEXITSTATUS(status));
}

int exit_code_of(int status) { return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status); }

// SIGINT / SIGTERM to the launcher are passed on to the workers, which then checkpoint and stop.
volatile sig_atomic_t g_forward_signal = 0;
void remember_signal(int sig) { g_forward_signal = sig; }

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

int launch_local_workers(const LaunchRequest& request, std::ostream& log) {
  // The rendezvous store lives here, as under torchrun's agent: it outlives any worker, so
  // the survivors of a failure can still learn from it which rank failed and why. Port 0:
  // the system picks a free one, no race with other programs.
  c10::intrusive_ptr<c10d::TCPStore> store;
  try {
    c10d::TCPStoreOptions options;
    options.port = 0;
    options.isServer = true;
    options.waitWorkers = false;
    options.timeout = request.grace;
    store = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", options);
  } catch (const std::exception& e) {
    throw DistributedError(std::string("cannot serve the rendezvous store on 127.0.0.1: ") + e.what());
  }
  const int port = store->getPort();

  // Everything the children need is built before fork(): between fork and exec a child of
  // this multi-threaded process may not allocate.
  std::vector<char*> argv;
  for (const auto& a : request.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const std::vector<std::string> ours = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                                         "MASTER_PORT", "TORCHELASTIC_USE_AGENT_STORE", "PLUGTRAIN_LAUNCHED"};
  std::vector<std::string> inherited;
  for (const auto& [k, v] : process_environment())
    if (std::find(ours.begin(), ours.end(), k) == ours.end()) inherited.push_back(k + "=" + v);
  std::vector<std::vector<std::string>> env_text(std::size_t(request.workers), inherited);
  std::vector<std::vector<char*>> envp(std::size_t(request.workers));
  for (int rank = 0; rank < request.workers; ++rank) {
    auto& text = env_text[std::size_t(rank)];
    for (const std::string& kv :
         {"RANK=" + std::to_string(rank), "WORLD_SIZE=" + std::to_string(request.workers),
          "LOCAL_RANK=" + std::to_string(rank), "LOCAL_WORLD_SIZE=" + std::to_string(request.workers),
          std::string("MASTER_ADDR=127.0.0.1"), "MASTER_PORT=" + std::to_string(port),
          std::string("TORCHELASTIC_USE_AGENT_STORE=True"), std::string("PLUGTRAIN_LAUNCHED=1")})
      text.push_back(kv);
    for (auto& kv : text) envp[std::size_t(rank)].push_back(kv.data());
    envp[std::size_t(rank)].push_back(nullptr);
  }

  struct sigaction forward {}, old_int {}, old_term {}, default_child {}, old_child {};
  forward.sa_handler = remember_signal;
  sigemptyset(&forward.sa_mask);
  sigaction(SIGINT, &forward, &old_int);
  sigaction(SIGTERM, &forward, &old_term);
  default_child.sa_handler = SIG_DFL;  // an inherited SIG_IGN would make waitpid() find no child
  sigemptyset(&default_child.sa_mask);
  sigaction(SIGCHLD, &default_child, &old_child);

  const pid_t launcher = ::getpid();
  std::map<pid_t, int> running;  // pid -> rank
  for (int rank = 0; rank < request.workers; ++rank) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      for (auto& [p, r] : running) ::kill(p, SIGKILL);
      throw DistributedError(std::string("cannot start worker process: ") + std::strerror(errno));
    }
    if (pid == 0) {
      // The worker dies with the launcher, however the launcher ends.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != launcher) ::_exit(1);
      // Its own process group: a Ctrl-C reaches the launcher only, which passes it on once
      // (a second SIGINT would make a worker exit at once, without its checkpoint).
      ::setpgid(0, 0);
      ::execve("/proc/self/exe", argv.data(), envp[std::size_t(rank)].data());
      static const char message[] = "plugtrain: error: cannot start a worker process (execve failed)\n";
      [[maybe_unused]] const auto n = ::write(2, message, sizeof message - 1);
      ::_exit(127);
    }
    running[pid] = rank;
  }
  log << "ddp: started " << request.workers << " worker processes (rendezvous 127.0.0.1:" << port << "):";
  for (const auto& [pid, rank] : running) log << " rank " << rank << " pid " << pid << ";";
  log << "\n" << std::flush;

  int result = 0;
  bool failing = false, interrupted = false;
  std::chrono::steady_clock::time_point kill_at;
  while (!running.empty()) {
    if (g_forward_signal) {
      for (auto& [p, r] : running) ::kill(p, g_forward_signal);
      g_forward_signal = 0;
      interrupted = true;
      if (!failing) kill_at = std::chrono::steady_clock::now() + request.grace;  // a worker stuck for good
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid < 0 && errno == ECHILD) break;
    if (pid > 0 && running.count(pid)) {
      const int rank = running[pid];
      running.erase(pid);
      const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      // 130: the worker stopped on the SIGINT/SIGTERM passed on to it, with its checkpoint.
      if (interrupted && WIFEXITED(status) && WEXITSTATUS(status) == 130) {
        result = result ? result : 130;
        continue;
      }
      if (!ok && !failing) {
        failing = true;
        result = exit_code_of(status);
        kill_at = std::chrono::steady_clock::now() + request.grace;
        log << "plugtrain: error: rank " << rank << " (pid " << pid << ") " << describe_status(status)
            << (running.empty() ? "" : "; waiting for the other ranks to stop") << "\n"
            << std::flush;
      }
      continue;
    }
    if ((failing || interrupted) && std::chrono::steady_clock::now() >= kill_at) {
      for (auto& [p, r] : running) {
        log << "plugtrain: error: rank " << r << " (pid " << p << ") did not stop within "
            << request.grace.count() / 1000.0 << " s; killing it\n";
        ::kill(p, SIGKILL);
      }
      kill_at = std::chrono::steady_clock::now() + std::chrono::hours(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGCHLD, &old_child, nullptr);
  return result;
}

}  // namespace plugtrain
