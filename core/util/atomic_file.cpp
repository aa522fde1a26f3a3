#include "util/atomic_file.h"

#include "util/error.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace plugtrain {

void write_file_atomically(const std::filesystem::path& path, const std::string& content) {
  const std::filesystem::path tmp = path.string() + ".tmp-" + std::to_string(::getpid());
  auto fail = [&](const std::string& what) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw Error(path.string() + ": " + what + ": " + why);
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) fail("cannot create");
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      fail("cannot write");
    }
    written += std::size_t(n);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail("cannot flush to disk");
  }
  if (::close(fd) != 0) fail("cannot close");
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail("cannot rename into place");
  // Make the rename itself durable: flush the folder's entry too.
  const std::filesystem::path folder = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

}  // namespace plugtrain
