#include "support/run_process.h"

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace plugtrain::testing {

ProcessResult run_process(const std::string& command, bool merge_stderr) {
  ProcessResult result;
  const std::string full = command + (merge_stderr ? " 2>&1" : "");
  FILE* pipe = ::popen(full.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) result.out.append(buf.data(), n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::string plugtrain_command(const std::string& args, const std::string& env, const std::filesystem::path& dir) {
  const std::string in_dir = dir.empty() ? "" : "cd " + shell_quote(dir.string()) + " && ";
  return in_dir + "exec env -u PLUGTRAIN_PLUGIN_PATH -u MLFLOW_TRACKING_URI " + (env.empty() ? "" : env + " ") +
         shell_quote(PLUGTRAIN_EXE) + " " + args;
}

std::filesystem::path scratch_dir(const std::string& prefix) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("plugtrain-" + prefix + "-" + std::to_string(::getpid()) + "-" +
                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace plugtrain::testing
