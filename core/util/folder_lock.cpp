#include "util/folder_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/error.h"

namespace plugtrain {

namespace fs = std::filesystem;

FolderLock::FolderLock(const fs::path& folder, const std::string& lock_file, const std::string& who) {
  fs::create_directories(folder);
  const fs::path file = folder / lock_file;
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(file.string() + ": cannot be opened to lock " + folder.string() + ": " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    char pid[32] = {};
    (void)!::pread(fd_, pid, sizeof pid - 1, 0);
    ::close(fd_);
    fd_ = -1;
    throw Error("another `" + who + "` (pid " + std::string(pid) + ") is using " + folder.string() +
                "; wait for it or stop it first");
  }
  const std::string me = std::to_string(::getpid());
  (void)!::ftruncate(fd_, 0);
  (void)!::pwrite(fd_, me.data(), me.size(), 0);
}

FolderLock::~FolderLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

bool folder_in_use(const fs::path& folder, const std::string& lock_file) {
  const int fd = ::open((folder / lock_file).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  // A shared lock is refused only while someone holds the exclusive one; it is let go at once.
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return held;
}

void remove_stale_temporaries(const fs::path& folder) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find(".tmp-") != std::string::npos && entry.is_regular_file(ec)) fs::remove(entry.path(), ec);
  }
}

}  // namespace plugtrain
