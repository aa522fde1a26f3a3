// Faults injected into a real plugtrain command, the one place end-to-end tests get them from.
// A fault is shell statements run before the command (`env`: variables exported, limits set)
// and arguments after `plugtrain run exp.toml` (`args`). (Killed workers and nodes are the
// scenario scripts of distributed_test.cpp and durability_test.cpp.)
// Plugin faults come from tests/test_plugins/fault_switch.h; PLUGTRAIN_TEST_PLUGIN_DIR is where the
// test plugins are built.
#pragma once

#include <string>

#include "support/run_process.h"

namespace plugtrain::testing::faults {

struct Fault {
  std::string env;
  std::string args;
};

inline std::string test_plugin(const std::string& folder) {
  return " --plugin-path " + shell_quote(std::string(PLUGTRAIN_TEST_PLUGIN_DIR) + "/" + folder);
}

// The "faulty" backend with `entry` failing as `kind` ("throw", "crash" or "hang"); a run
// selects it by name. Entry points: create_backend, capabilities, probe, loader_config,
// plan_multi_device, memory, release_cached_memory, reset_peak_memory.
// Shell: sets the test plugins' fault switch (tests/test_plugins/fault_switch.h).
inline std::string fault_switch(const std::string& entry, const std::string& kind) {
  return "export PLUGTRAIN_TEST_FAULT=" + entry + ":" + kind + "; ";
}

inline Fault backend_entry(const std::string& entry, const std::string& kind) {
  return {fault_switch(entry, kind), test_plugin("fault_backend")};
}
inline std::string select_faulty_backend() { return " --set backend.name=\\\"faulty\\\""; }

// The models plugin's "faultnet" with `entry` failing as `kind`: register_models, create_model
// or forward.
inline Fault model_entry(const std::string& entry, const std::string& kind) {
  return {fault_switch(entry, kind), test_plugin("fault_models") + " --set model.name=\\\"faultnet\\\""};
}

// A disk that fills up: every write past `kib` KiB of one file fails with EFBIG ("File too
// large"), as ENOSPC would, without filling the real disk.
inline Fault writes_fail_past(int kib) { return {"trap '' XFSZ; ulimit -f " + std::to_string(kib) + "; ", ""}; }

// A device with `bytes` of memory (the "limited" backend counts every allocation): allocations
// beyond it fail with LibTorch's own out-of-memory error.
inline Fault device_memory(long long bytes) {
  return {"export PLUGTRAIN_TEST_MEMORY_LIMIT=" + std::to_string(bytes) + "; ",
          test_plugin("limited_memory") + " --set backend.name=\\\"limited\\\""};
}

}  // namespace plugtrain::testing::faults
