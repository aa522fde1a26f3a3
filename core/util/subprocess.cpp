#include "util/subprocess.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace plugtrain {

namespace {

// This process's environment with `set` over it, as "NAME=value" texts.
std::vector<std::string> child_environment(const std::vector<std::pair<std::string, std::string>>& set) {
  std::vector<std::string> text;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    bool replaced = false;
    for (const auto& [name, value] : set) replaced |= entry.rfind(name + "=", 0) == 0;
    if (!replaced) text.push_back(entry);
  }
  for (const auto& [name, value] : set) text.push_back(name + "=" + value);
  return text;
}

std::vector<char*> pointers(std::vector<std::string>& texts) {
  std::vector<char*> p;
  for (auto& t : texts) p.push_back(t.data());
  p.push_back(nullptr);
  return p;
}

// In the child, between fork and exec: only calls that allocate nothing.
void redirect(int fd, int target) {
  if (fd < 0) return;
  if (fd == target)
    ::fcntl(fd, F_SETFD, 0);  // already in place: only keep it open across exec
  else
    ::dup2(fd, target);  // the copy does not close on exec
}

}  // namespace

ExitStatus ExitStatus::from_wait_status(int status) {
  ExitStatus s;
  if (WIFSIGNALED(status))
    s.signal = WTERMSIG(status);
  else
    s.exit_code = WEXITSTATUS(status);
  return s;
}

std::string ExitStatus::text() const {
  return signal ? "was killed by " + signal_text(signal) : "exited with code " + std::to_string(exit_code);
}

std::string signal_text(int signal) {
  const char* name = sigabbrev_np(signal);
  return "signal " + std::to_string(signal) + (name ? std::string(" (SIG") + name + ")" : std::string());
}

Result<ChildProcess> spawn(const SpawnSpec& spec) {
  // Everything the child needs is made before fork(): between fork and exec a child of a
  // multi-threaded process may not allocate.
  std::vector<std::string> env_text = child_environment(spec.environment);
  std::vector<std::string> argv_text = spec.argv;
  std::vector<char*> envp = pointers(env_text), argv = pointers(argv_text);
  const std::string program = spec.program.empty() ? spec.argv.at(0) : spec.program.string();
  FileDescriptor output;  // opened before fork; closes on exec once copied to stdout
  if (!spec.output_file.empty()) {
    output = FileDescriptor(::open(spec.output_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
    if (!output.valid()) return WhyNot{spec.output_file.string() + ": cannot be written: " + std::strerror(errno)};
  }

  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return WhyNot{"cannot start " + spec.what + ": " + std::strerror(errno)};
  if (pid == 0) {
    if (spec.own_process_group) ::setpgid(0, 0);
    if (spec.death_signal) {
      ::prctl(PR_SET_PDEATHSIG, spec.death_signal);
      if (::getppid() != parent) ::_exit(spec.orphan_exit_code);  // the parent died before prctl
    }
    redirect(output.get(), 1);
    if (spec.errors_to_output) redirect(output.get(), 2);
    ::execve(program.c_str(), argv.data(), envp.data());
    if (!spec.exec_failure.empty()) {
      [[maybe_unused]] const auto n = ::write(2, spec.exec_failure.data(), spec.exec_failure.size());
    }
    ::_exit(127);
  }
  ChildProcess child;
  child.pid = pid;
  return Result<ChildProcess>(std::move(child));  // the file closes here, in this process
}

Result<ChildProcess> run_in_child(const std::function<int(int to_parent)>& body) {
  Result<Pipe> pipe = make_pipe();
  if (!pipe) return WhyNot{"cannot start a child process: " + pipe.why_not()};
  const pid_t pid = ::fork();
  if (pid < 0) return WhyNot{std::string("cannot start a child process: ") + std::strerror(errno)};
  if (pid == 0) {
    pipe.value().read_end.reset();
    try {
      ::_exit(body(pipe.value().write_end.get()));
    } catch (...) {
      // Whatever `body` threw must not unwind into the code that called fork(), which is the
      // parent's: the child ends here.
      ::_exit(1);
    }
  }
  ChildProcess child;
  child.pid = pid;
  child.from_child = std::move(pipe.value().read_end);
  return Result<ChildProcess>(std::move(child));
}

ExitStatus wait_for(pid_t child) {
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return ExitStatus::from_wait_status(status);
}

Reaped reap_any() {
  int status = 0;
  pid_t ended;
  while ((ended = ::waitpid(-1, &status, WNOHANG)) < 0 && errno == EINTR) {
  }
  Reaped r;
  if (ended < 0) r.no_children = errno == ECHILD;
  if (ended > 0) {
    r.pid = ended;
    r.status = ExitStatus::from_wait_status(status);
  }
  return r;
}

void send_signal(pid_t child, int signal) { ::kill(child, signal); }

ReapableChildren::ReapableChildren() {
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  ::sigaction(SIGCHLD, &default_action, &previous_);
}

ReapableChildren::~ReapableChildren() { ::sigaction(SIGCHLD, &previous_, nullptr); }

}  // namespace plugtrain
