// Child processes of a command that runs others (a sweep's trials): started in a process group
// of their own, so a Ctrl-C on the terminal reaches only the parent, which passes it on once;
// they die with the parent.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace plugtrain {

// Starts argv[0] (a path) with `argv`, this process's environment plus `environment`, and its
// stdout and stderr appended to `output`. Throws Error when it cannot.
pid_t start_process(const std::vector<std::string>& argv,
                    const std::vector<std::pair<std::string, std::string>>& environment,
                    const std::filesystem::path& output);

struct Finished {
  pid_t pid = 0;
  int exit_code = 0;  // 128 + signal for a killed process
};

// A child that has ended, without waiting; pid 0 when none has.
Finished poll_finished();

}  // namespace plugtrain
