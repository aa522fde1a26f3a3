// Running `plugtrain` in a test's folder with the emulated accelerator
// (examples/plugins/emulated_accelerator, built into the test plugins) on the plugin path, as
// the device tests of emulated_device_test.cpp and emulated_accelerator_test.cpp do.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "support/faults.h"
#include "support/run_folder.h"
#include "support/run_process.h"

namespace plugtrain::testing {

// The shell command for `plugtrain ARGS` in `dir`, environment `env` ("NAME=value ..."), with
// the emulated plugin on the path unless ARGS is `export ...` (which loads no plugin).
inline std::string emulated_command(const std::filesystem::path& dir, const std::string& args,
                                    const std::string& env = "") {
  const bool loads_plugins = args.rfind("export ", 0) != 0;
  return plugtrain_command(args + (loads_plugins ? faults::test_plugin("emulated") : ""), env, dir);
}

}  // namespace plugtrain::testing
