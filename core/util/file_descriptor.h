// A file descriptor that closes itself, and the pipe reads and writes that child processes
// (util/subprocess.h) and their parents share: each retries what a signal interrupted.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "util/result.h"

namespace plugtrain {

class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() { reset(); }
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.release()) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;

  int get() const { return fd_; }  // -1 when none
  bool valid() const { return fd_ >= 0; }
  int release();  // the caller closes it
  void reset();   // closes it now

 private:
  int fd_ = -1;
};

struct Pipe {
  FileDescriptor read_end, write_end;
};

// Both ends close on exec, so a child that another thread starts meanwhile does not hold
// them open (a reader would then never see the end).
Result<Pipe> make_pipe();

// Writes all of `text`; false when the reader is gone or the write fails.
bool write_all(int fd, std::string_view text);

struct ReadUntilClosed {
  std::string text;
  bool timed_out = false;  // `deadline` passed before the writer closed its end
};

// Reads `fd` until its writer closes it (or a read fails) or `deadline` passes.
ReadUntilClosed read_until_closed(int fd, std::chrono::steady_clock::time_point deadline);

}  // namespace plugtrain
