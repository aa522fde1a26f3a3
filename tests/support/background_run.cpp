#include "support/background_run.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>

namespace plugtrain::testing {

BackgroundRun::BackgroundRun(const std::string& command) {
  int ends[2];
  if (::pipe(ends) != 0) return;
  // The smallest pipe Linux gives: a page. Without it, 64 KiB of output could pass unread.
  ::fcntl(ends[1], F_SETPIPE_SZ, 4096);
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(ends[1], STDOUT_FILENO);
    ::dup2(ends[1], STDERR_FILENO);
    ::close(ends[0]);
    ::close(ends[1]);
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(ends[1]);
  read_end_ = ends[0];
}

BackgroundRun::~BackgroundRun() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (read_end_ >= 0) ::close(read_end_);
}

bool BackgroundRun::read_some() {
  if (read_end_ < 0) return false;
  std::array<char, 512> buf{};
  ssize_t n = 0;
  do n = ::read(read_end_, buf.data(), buf.size());
  while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  out_.append(buf.data(), static_cast<std::size_t>(n));
  return true;
}

bool BackgroundRun::wait_for(const std::string& text) {
  while (out_.find(text) == std::string::npos)
    if (!read_some()) return false;
  return true;
}

bool BackgroundRun::signal(int signal_number) const { return pid_ > 0 && ::kill(pid_, signal_number) == 0; }

ProcessResult BackgroundRun::finish() {
  while (read_some()) {}
  ProcessResult result{-1, out_};
  int status = 0;
  if (pid_ > 0 && ::waitpid(pid_, &status, 0) == pid_)
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  pid_ = -1;
  return result;
}

}  // namespace plugtrain::testing
