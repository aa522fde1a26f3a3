#include "util/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/error.h"

extern char** environ;

namespace plugtrain {

pid_t start_process(const std::vector<std::string>& argv,
                    const std::vector<std::pair<std::string, std::string>>& environment,
                    const std::filesystem::path& output) {
  // Everything the child needs is built before fork(): between fork and exec a child of a
  // multi-threaded process may not allocate.
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    bool replaced = false;
    for (const auto& [name, value] : environment) replaced |= entry.rfind(name + "=", 0) == 0;
    if (!replaced) env_text.push_back(entry);
  }
  for (const auto& [name, value] : environment) env_text.push_back(name + "=" + value);
  std::vector<char*> envp, args;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);
  const int fd = ::open(output.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(output.string() + ": cannot be written: " + std::strerror(errno));
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fd);
    throw Error(std::string("cannot start a process: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  ::close(fd);
  return pid;
}

Finished poll_finished() {
  int status = 0;
  const pid_t pid = ::waitpid(-1, &status, WNOHANG);
  if (pid <= 0) return {};
  return {pid, WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status)};
}

}  // namespace plugtrain
