// Runs a shell command in a fresh process and captures what a user would see; reads files back.
#pragma once

#include <filesystem>
#include <string>

namespace plugtrain::testing {

struct ProcessResult {
  int exit_code = -1;
  std::string out;  // stdout (and stderr when merged)
};

// Runs `command` with /bin/sh. merge_stderr: append 2>&1.
ProcessResult run_process(const std::string& command, bool merge_stderr = true);

// The shell command for `plugtrain ARGS` as a user runs it: PLUGTRAIN_PLUGIN_PATH unset (so only
// the plugins a test names are loaded) and MLFLOW_TRACKING_URI too (no run logs to a server of the
// machine's), the environment `env` ("NAME=value ..."), in `dir` when one
// is given. It `exec`s plugtrain, so the shell's pid is plugtrain's and a test's signal reaches it.
std::string plugtrain_command(const std::string& args, const std::string& env = "",
                              const std::filesystem::path& dir = {});

// An empty folder of this test's own under the system temp folder:
// <temp>/plugtrain-<prefix>-<pid>-<test name>.
std::filesystem::path scratch_dir(const std::string& prefix);

// A whole file's bytes ("" when it cannot be read).
std::string slurp(const std::filesystem::path& path);

// Quotes a string for /bin/sh.
std::string shell_quote(const std::string& s);

}  // namespace plugtrain::testing
