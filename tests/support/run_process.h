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

// An empty folder of this test's own under the system temp folder:
// <temp>/plugtrain-<prefix>-<pid>-<test name>.
std::filesystem::path scratch_dir(const std::string& prefix);

// A whole file's bytes ("" when it cannot be read).
std::string slurp(const std::filesystem::path& path);

// Quotes a string for /bin/sh.
std::string shell_quote(const std::string& s);

}  // namespace plugtrain::testing
