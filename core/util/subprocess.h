// Child processes, started and waited for in this one place: a program run with its own
// arguments and environment (a sweep's trials, ddp's worker ranks) or a function run in a
// forked copy of this process (a backend's probe, so that a crash costs only the child).
// Every wait retries what a signal interrupted, every descriptor made here closes on exec, and
// how a child ended is decoded once (ExitStatus). A child that cannot be started is a WhyNot:
// the caller turns it into the Error its user sees.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "util/file_descriptor.h"
#include "util/result.h"

namespace plugtrain {

// How a child ended.
struct ExitStatus {
  int exit_code = 0;  // its exit code, when it exited
  int signal = 0;     // the signal that ended it; 0 when it exited

  static ExitStatus from_wait_status(int status);  // waitpid()'s status
  bool succeeded() const { return signal == 0 && exit_code == 0; }
  // As a shell gives it: the exit code, or 128 + the signal for a killed process.
  int shell_code() const { return signal ? 128 + signal : exit_code; }
  // "exited with code 3", "was killed by signal 9 (SIGKILL)"
  std::string text() const;
};

// "signal 11 (SIGSEGV)"
std::string signal_text(int signal);

struct SpawnSpec {
  std::vector<std::string> argv;  // argv[0] is the name the program sees
  std::filesystem::path program;  // the file executed; empty: argv[0]
  // Set in the child, over the variables of this process's environment, which it inherits.
  std::vector<std::pair<std::string, std::string>> environment;
  std::filesystem::path output_file;  // stdout appended to it; empty: this process's stdout
  bool errors_to_output = false;      // stderr goes where stdout goes
  // A process group of its own: a Ctrl-C on the terminal then reaches only this process,
  // which passes it on once.
  bool own_process_group = false;
  int death_signal = 0;          // sent to the child when this process dies; 0: none
  int orphan_exit_code = 127;    // the child's code when this process died before death_signal was armed
  std::string exec_failure;      // written to the child's stderr when the program cannot be executed
  std::string what = "a process";  // named in "cannot start <what>: <why>"
};

struct ChildProcess {
  pid_t pid = 0;
  FileDescriptor from_child;  // what run_in_child's body writes
};

// Starts spec.program; a program that cannot be executed ends its child with code 127.
Result<ChildProcess> spawn(const SpawnSpec& spec);

// Runs `body` in a forked copy of this process, without exec. `body` gets the write end of a
// pipe whose read end is the ChildProcess's from_child; the child ends with _exit(what `body`
// returns), running none of this process's destructors or atexit handlers. Only for work
// that may use what the fork copied (in a multi-threaded process: no lock another thread held).
Result<ChildProcess> run_in_child(const std::function<int(int to_parent)>& body);

ExitStatus wait_for(pid_t child);  // blocks until it has ended

// A child of this process that has ended, without waiting.
struct Reaped {
  pid_t pid = 0;  // 0: none has ended yet
  ExitStatus status;
  bool no_children = false;  // this process has no child left to wait for
};
Reaped reap_any();

void send_signal(pid_t child, int signal);

// Children are reaped here (wait_for, reap_any) for the life of this object, even when this
// process was started with SIGCHLD ignored, which would make the system reap them first.
class ReapableChildren {
 public:
  ReapableChildren();
  ~ReapableChildren();  // the previous SIGCHLD disposition again
  ReapableChildren(const ReapableChildren&) = delete;
  ReapableChildren& operator=(const ReapableChildren&) = delete;

 private:
  struct sigaction previous_ {};
};

}  // namespace plugtrain
