// A command started in the background that the test interrupts once it has printed a given line.
// Its output (stdout and stderr) comes through a pipe of one page that the test reads: a process
// whose next line finds the pipe full waits until the test reads on. So however fast the machine,
// the process is at most a page of output past the line the test waits for when the signal is
// sent, which a test turns into a bound on steps by logging every step (a polled log file gives
// no such bound: a fast machine finished a whole run between two polls).
#pragma once

#include <sys/types.h>

#include <string>

#include "support/run_process.h"

namespace plugtrain::testing {

class BackgroundRun {
 public:
  // Runs `command` with /bin/sh; it should `exec` the program (as the tests' command builders
  // do), so that a signal reaches the program and not a shell.
  explicit BackgroundRun(const std::string& command);
  ~BackgroundRun();  // kills and reaps a process still running
  BackgroundRun(const BackgroundRun&) = delete;
  BackgroundRun& operator=(const BackgroundRun&) = delete;

  // Reads output until `text` has appeared (true) or the output ends (false).
  bool wait_for(const std::string& text);
  bool signal(int signal_number) const;
  // Reads the rest of the output and waits for the process's exit.
  ProcessResult finish();
  const std::string& out() const { return out_; }

 private:
  bool read_some();  // false at the end of the output

  pid_t pid_ = -1;
  int read_end_ = -1;
  std::string out_;
};

}  // namespace plugtrain::testing
