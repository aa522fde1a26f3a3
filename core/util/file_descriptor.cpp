#include "util/file_descriptor.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace plugtrain {

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.release();
  }
  return *this;
}

int FileDescriptor::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

void FileDescriptor::reset() {
  // Not retried on EINTR: on Linux the descriptor is closed even then, and a retry could
  // close one another thread has just opened under the same number.
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Result<Pipe> make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return WhyNot{std::string("cannot make a pipe: ") + std::strerror(errno)};
  Pipe pipe;
  pipe.read_end = FileDescriptor(fds[0]);
  pipe.write_end = FileDescriptor(fds[1]);
  return Result<Pipe>(std::move(pipe));
}

bool write_all(int fd, std::string_view text) {
  std::size_t sent = 0;
  while (sent < text.size()) {
    const ssize_t n = ::write(fd, text.data() + sent, text.size() - sent);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += std::size_t(n);
  }
  return true;
}

ReadUntilClosed read_until_closed(int fd, std::chrono::steady_clock::time_point deadline) {
  ReadUntilClosed result;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      result.timed_out = true;
      return result;
    }
    pollfd readable{fd, POLLIN, 0};
    // At most a second at a time, so a deadline is kept even if poll() is woken without cause.
    const int ready = ::poll(&readable, 1, int(std::min<long long>(left, 1000)));
    if (ready <= 0) continue;  // nothing yet, or interrupted by a signal
    char buffer[4096];
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return result;  // the writer closed its end: the text is complete
    result.text.append(buffer, std::size_t(n));
  }
}

}  // namespace plugtrain
