// GPT language models on the Jargon File (Debian's jargon-text) through the text data set, on
// the host CPU, for the transformers' and the sub-word vocabularies' end-to-end tests.
#pragma once

#include <cstdlib>
#include <string>

#include "support/experiment_toml.h"

namespace plugtrain::testing {

// Debian's path; JARGON_TEXT names another (the GPU machine's unpacked copy, scripts/gpu-session).
inline const char* const kJargonTextFile =
    std::getenv("JARGON_TEXT") ? std::getenv("JARGON_TEXT") : "/usr/share/doc/jargon-text/jargon.txt.gz";

// The run's frame: a test sets the model's size, the [dataset] keys and the recipe.
inline ExperimentToml jargon_gpt(const std::string& name) {
  return ExperimentToml(name)
      .on_cpu()
      .set("model.name", "gpt")
      .set("task.name", "language_model")
      .set("data.dataset", "text")
      .set("data.path", kJargonTextFile);
}

// A tiny one (1 layer, width 32, context 32, 64 val windows): `dataset_table` holds the
// [dataset] keys beyond the window, as TOML lines.
inline std::string tiny_jargon_gpt(const std::string& name, const std::string& dataset_table, int epochs, int steps) {
  return jargon_gpt(name)
             .set("experiment.seed", 1)
             .set_keys("model", {{"layers", 1}, {"heads", 2}, {"width", 32}})
             .set("data.batch_size", 16)
             .set_keys("optim", {{"name", "adamw"}, {"lr", 3e-3}})
             .set_keys("train", {{"epochs", epochs}, {"steps_per_epoch", steps}, {"log_interval", 10}})
             .set_keys("dataset", {{"context", 32}, {"val_windows", 64}})  // last: dataset_table follows it
             .text() +
         dataset_table;
}

}  // namespace plugtrain::testing
