// The one subprocess helper (core/util/subprocess.h): how children are started, fed, heard
// and waited for, and how their ends are told.
// ctest-label: unit
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "util/subprocess.h"

namespace plugtrain {
namespace subprocess_test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

SpawnSpec shell(const std::string& script) {
  SpawnSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  return spec;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

fs::path scratch_folder() { return fs::temp_directory_path() / ("plugtrain_subprocess_" + std::to_string(::getpid())); }

fs::path scratch(const std::string& name) {
  fs::create_directories(scratch_folder());
  return scratch_folder() / name;
}

class Subprocess : public ::testing::Test {
 protected:
  void TearDown() override { fs::remove_all(scratch_folder()); }
};

TEST_F(Subprocess, ExitCodesAndSignalsAreDecodedOnce) {
  Result<ChildProcess> exits = spawn(shell("exit 3"));
  ASSERT_TRUE(exits) << exits.why_not();
  const ExitStatus three = wait_for(exits.value().pid);
  EXPECT_FALSE(three.succeeded());
  EXPECT_EQ(three.exit_code, 3);
  EXPECT_EQ(three.shell_code(), 3);
  EXPECT_EQ(three.text(), "exited with code 3");

  Result<ChildProcess> sleeps = spawn(shell("exec sleep 30"));
  ASSERT_TRUE(sleeps) << sleeps.why_not();
  send_signal(sleeps.value().pid, SIGKILL);
  const ExitStatus killed = wait_for(sleeps.value().pid);
  EXPECT_EQ(killed.signal, SIGKILL);
  EXPECT_EQ(killed.shell_code(), 128 + SIGKILL);
  EXPECT_EQ(killed.text(), "was killed by signal 9 (SIGKILL)");
  EXPECT_EQ(signal_text(SIGSEGV), "signal 11 (SIGSEGV)");
}

TEST_F(Subprocess, EnvironmentIsInheritedWithTheGivenVariablesOverIt) {
  ::setenv("PLUGTRAIN_SUBPROCESS_KEPT", "kept", 1);
  ::setenv("PLUGTRAIN_SUBPROCESS_SET", "old", 1);
  SpawnSpec spec = shell("echo $PLUGTRAIN_SUBPROCESS_KEPT $PLUGTRAIN_SUBPROCESS_SET; echo oops >&2");
  spec.environment = {{"PLUGTRAIN_SUBPROCESS_SET", "new"}};
  spec.output_file = scratch("env.log");
  spec.errors_to_output = true;
  std::ofstream(spec.output_file) << "before\n";
  Result<ChildProcess> child = spawn(spec);
  ASSERT_TRUE(child) << child.why_not();
  EXPECT_TRUE(wait_for(child.value().pid).succeeded());
  EXPECT_EQ(read_file(spec.output_file), "before\nkept new\noops\n");  // appended, stderr too
}

TEST_F(Subprocess, WhatCannotStartSaysWhy) {
  SpawnSpec unwritable = shell("true");
  unwritable.output_file = "/nonexistent/plugtrain/output.log";
  Result<ChildProcess> refused = spawn(unwritable);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.why_not(), "/nonexistent/plugtrain/output.log: cannot be written: No such file or directory");

  // A program that cannot be executed: exit 127, and the message asked for on its stderr.
  SpawnSpec no_program;
  no_program.argv = {"/nonexistent/plugtrain/program"};
  no_program.exec_failure = "cannot run it\n";
  no_program.output_file = scratch("exec.log");
  no_program.errors_to_output = true;
  Result<ChildProcess> child = spawn(no_program);
  ASSERT_TRUE(child) << child.why_not();
  EXPECT_EQ(wait_for(child.value().pid).exit_code, 127);
  EXPECT_EQ(read_file(no_program.output_file), "cannot run it\n");
}

TEST_F(Subprocess, OwnProcessGroup) {
  SpawnSpec spec = shell("exec sleep 30");
  spec.own_process_group = true;
  spec.death_signal = SIGKILL;
  Result<ChildProcess> child = spawn(spec);
  ASSERT_TRUE(child) << child.why_not();
  const pid_t pid = child.value().pid;
  pid_t group = 0;
  for (int i = 0; i < 200 && (group = ::getpgid(pid)) != pid; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(group, pid);
  send_signal(pid, SIGTERM);
  EXPECT_EQ(wait_for(pid).signal, SIGTERM);
}

TEST_F(Subprocess, FunctionInAChildAnswersThroughItsPipe) {
  Result<ChildProcess> child = run_in_child([](int to_parent) { return write_all(to_parent, "answer") ? 4 : 5; });
  ASSERT_TRUE(child) << child.why_not();
  const ReadUntilClosed answer =
      read_until_closed(child.value().from_child.get(), std::chrono::steady_clock::now() + 10s);
  EXPECT_EQ(answer.text, "answer");
  EXPECT_EQ(wait_for(child.value().pid).exit_code, 4);

  Result<ChildProcess> throws = run_in_child([](int) -> int { throw std::runtime_error("in the child"); });
  ASSERT_TRUE(throws) << throws.why_not();
  EXPECT_EQ(wait_for(throws.value().pid).exit_code, 1);  // it did not go on as this process
}

TEST_F(Subprocess, ReadingStopsAtTheDeadline) {
  Result<ChildProcess> child = run_in_child([](int) {
    std::this_thread::sleep_for(30s);
    return 0;
  });
  ASSERT_TRUE(child) << child.why_not();
  const auto start = std::chrono::steady_clock::now();
  const ReadUntilClosed answer = read_until_closed(child.value().from_child.get(), start + 200ms);
  EXPECT_TRUE(answer.timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 20s);  // generous: the child sleeps 30 s
  send_signal(child.value().pid, SIGKILL);
  EXPECT_EQ(wait_for(child.value().pid).signal, SIGKILL);
}

TEST_F(Subprocess, ReapAnySaysWhichChildEndedAndWhenNoneIsLeft) {
  const ReapableChildren reapable;
  Result<ChildProcess> child = spawn(shell("exit 7"));
  ASSERT_TRUE(child) << child.why_not();
  Reaped reaped;
  for (int i = 0; i < 1000 && reaped.pid == 0; ++i) {
    reaped = reap_any();
    if (reaped.pid == 0) std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(reaped.pid, child.value().pid);
  EXPECT_EQ(reaped.status.exit_code, 7);
  EXPECT_TRUE(reap_any().no_children);
}

}  // namespace subprocess_test
}  // namespace plugtrain
