// The experiment reader on arbitrary text: parse, resolve every key against the schema, write
// the resolved record and read it back. A ConfigError is the expected answer to bad input;
// anything else (another exception, a crash, a sanitizer report) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/config_error.h"
#include "config/experiment_loader.h"
#include "config/resolved_experiment.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    plugtrain::ExperimentFile file = plugtrain::parse_experiment_text(text, "fuzz.toml");
    const plugtrain::Experiment e = plugtrain::resolve_experiment(file);
    const std::string record = plugtrain::resolved_toml(e);
    // A record always continues its own run.
    if (!plugtrain::resume_compatible(record, record)) __builtin_trap();
  } catch (const plugtrain::ConfigError&) {
  }
  return 0;
}
