// Running `plugtrain` in a test's folder with the emulated accelerator
// (examples/plugins/emulated_accelerator, built into the test plugins) on the plugin path, as
// the device tests of emulated_device_test.cpp and emulated_accelerator_test.cpp do.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "support/faults.h"
#include "support/run_process.h"

namespace plugtrain::testing {

// The shell command for `plugtrain ARGS` in `dir`, environment `env` ("NAME=value ..."), with
// the emulated plugin on the path unless ARGS is `export ...` (which loads no plugin).
inline std::string emulated_command(const std::filesystem::path& dir, const std::string& args,
                                    const std::string& env = "") {
  const bool loads_plugins = args.rfind("export ", 0) != 0;
  return "cd " + shell_quote(dir.string()) + " && exec env -u PLUGTRAIN_PLUGIN_PATH " + env + " " +
         shell_quote(PLUGTRAIN_EXE) + " " + args + (loads_plugins ? faults::test_plugin("emulated") : "");
}

// runs/<name>/version_<n>/summary.json under `dir`.
inline nlohmann::json run_summary(const std::filesystem::path& dir, const std::string& name, int n) {
  return nlohmann::json::parse(slurp(dir / "runs" / name / ("version_" + std::to_string(n)) / "summary.json"));
}

}  // namespace plugtrain::testing
