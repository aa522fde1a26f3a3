// The Python PyTorch peer of a benchmark: a script of bench/python/ run with the Python of the
// torch wheel plugtrain builds against (PLUGTRAIN_PYTHON, set by bench/CMakeLists.txt;
// PLUGTRAIN_BENCH_PYTHON in the environment overrides it), kept running beside the bench and
// asked for one measurement at a time. So the bench can alternate its own measurements with
// the peer's (ours, theirs, ours, theirs, ...) and machine noise hits both sides alike.
//
// Protocol, one line each way: the script's first JSON line is {"ready": ...} with what it
// wants to say about itself (versions, parameter counts) or {"skipped": reason} when it cannot
// run (torch or torchvision missing); then for each command line the bench writes it answers
// one JSON line ({"error": message} for a failure); "quit" ends it. Lines that are not JSON
// objects (warnings; the script's stderr goes to the same pipe) are ignored. A missing Python, a
// script that dies or answers {"error"} leaves the peer skipped with the reason: not an error of
// the benchmark, which then prints "python peer: skipped (<reason>)".
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

extern char** environ;

namespace plugtrain::bench {

inline std::string python_executable() {
  if (const char* env = std::getenv("PLUGTRAIN_BENCH_PYTHON"); env && *env) return env;
#ifdef PLUGTRAIN_PYTHON
  return PLUGTRAIN_PYTHON;
#else
  return "";
#endif
}

class PythonPeer {
 public:
  // Starts bench/python/<script> with `args` and waits for its first answer.
  PythonPeer(const std::string& script, const std::vector<std::string>& args) : script_(script) {
    const std::string python = python_executable();
    if (python.empty()) {
      skipped_ = "no Python beside the torch wheel when this was built (set PLUGTRAIN_BENCH_PYTHON)";
      return;
    }
    if (!std::filesystem::exists(python)) {
      skipped_ = python + ": not found";
      return;
    }
    ::signal(SIGPIPE, SIG_IGN);  // a peer that died must not kill the bench when asked
    int to_child[2], from_child[2];
    if (::pipe2(to_child, O_CLOEXEC) != 0 || ::pipe2(from_child, O_CLOEXEC) != 0) {
      skipped_ = "cannot make a pipe";
      return;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], 0);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], 1);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], 2);
    std::vector<std::string> argv_strings{python, "-u", std::string(PLUGTRAIN_BENCH_PYTHON_DIR) + "/" + script};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& s : argv_strings) argv.push_back(s.data());
    argv.push_back(nullptr);
    std::fflush(stdout);
    const int rc = ::posix_spawn(&pid_, python.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(to_child[0]);
    ::close(from_child[1]);
    if (rc != 0) {
      ::close(to_child[1]);
      ::close(from_child[0]);
      pid_ = -1;
      skipped_ = "cannot start " + python;
      return;
    }
    to_ = ::fdopen(to_child[1], "w");
    from_ = ::fdopen(from_child[0], "r");
    hello_ = next_answer();
    if (!skipped_.empty()) return;
    if (hello_.contains("skipped")) {
      skipped_ = hello_.at("skipped").get<std::string>();
      stop();
    }
  }
  ~PythonPeer() { stop(); }
  PythonPeer(const PythonPeer&) = delete;
  PythonPeer& operator=(const PythonPeer&) = delete;

  bool ok() const { return skipped_.empty(); }
  const std::string& skipped() const { return skipped_; }
  const nlohmann::json& hello() const { return hello_; }

  // One command, its answer; a null json (and ok() false from then on) when the peer failed.
  nlohmann::json ask(const std::string& command) {
    if (!ok()) return nullptr;
    std::fprintf(to_, "%s\n", command.c_str());
    std::fflush(to_);
    nlohmann::json answer = next_answer();
    if (ok() && answer.contains("error")) {
      skipped_ = script_ + ": " + answer.at("error").get<std::string>();
      stop();
    }
    return ok() ? answer : nlohmann::json(nullptr);
  }

 private:
  nlohmann::json next_answer() {
    std::string last_line;
    char* line = nullptr;
    size_t capacity = 0;
    for (ssize_t n; (n = ::getline(&line, &capacity, from_)) > 0;) {
      std::string text(line, size_t(n));
      while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
      if (text.empty()) continue;
      if (text.front() == '{') {
        nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
        if (j.is_object()) {
          std::free(line);
          return j;
        }
      }
      last_line = text;
    }
    std::free(line);
    const int code = stop();
    skipped_ = script_ + " exited with status " + std::to_string(code) + (last_line.empty() ? "" : ": " + last_line);
    return nullptr;
  }

  // Ends the peer (quit, then wait); its exit status.
  int stop() {
    if (to_) {
      std::fprintf(to_, "quit\n");
      std::fclose(to_);
      to_ = nullptr;
    }
    if (from_) {
      std::fclose(from_);
      from_ = nullptr;
    }
    int status = 0;
    if (pid_ > 0) {
      ::waitpid(pid_, &status, 0);
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    return 0;
  }

  std::string script_;
  pid_t pid_ = -1;
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
  std::string skipped_;
  nlohmann::json hello_;
};

}  // namespace plugtrain::bench
