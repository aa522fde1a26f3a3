// A test's own folder holding exp.toml, where plugtrain runs in a fresh process as a user runs
// it there (PLUGTRAIN_PLUGIN_PATH unset, so only what the test names is loaded).
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "support/faults.h"
#include "support/run_process.h"

namespace plugtrain::testing {

class ExperimentFolderTest : public ::testing::Test {
 protected:
  // prefix names the scratch folder; experiment is written as exp.toml.
  ExperimentFolderTest(std::string prefix, std::string experiment)
      : prefix_(std::move(prefix)), experiment_(std::move(experiment)) {}
  void SetUp() override {
    dir_ = scratch_dir(prefix_);
    write_experiment(experiment_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void write_experiment(const std::string& text) const { std::ofstream(dir_ / "exp.toml") << text; }
  // The shell command that runs `plugtrain args` in the folder.
  std::string command(const std::string& args) const { return plugtrain_command(args, "", dir_); }
  ProcessResult plugtrain(const std::string& args) const { return run_process(command(args)); }
  // `plugtrain args` with a fault injected (support/faults.h).
  ProcessResult plugtrain_with(const faults::Fault& fault, const std::string& args) const {
    return run_process(fault.env + command(args + fault.args));
  }

  std::filesystem::path dir_;

 private:
  std::string prefix_, experiment_;
};

}  // namespace plugtrain::testing
