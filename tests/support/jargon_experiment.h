// A tiny GPT on the Jargon File (Debian's jargon-text) through the text data set, for the
// sub-word vocabularies' end-to-end tests: `dataset_table` holds the [dataset] keys beyond the
// window (context 32, 64 val windows).
#pragma once

#include <string>

namespace plugtrain::testing {

inline constexpr const char* kJargonTextFile = "/usr/share/doc/jargon-text/jargon.txt.gz";

inline std::string tiny_jargon_gpt(const std::string& name, const std::string& dataset_table, int epochs, int steps) {
  return "[experiment]\nname = \"" + name + "\"\nseed = 1\n[backend]\nname = \"cpu\"\n" +
         "[model]\nname = \"gpt\"\nlayers = 1\nheads = 2\nwidth = 32\n[task]\nname = \"language_model\"\n" +
         "[data]\ndataset = \"text\"\npath = \"" + kJargonTextFile + "\"\nbatch_size = 16\n[dataset]\ncontext = 32\n" +
         "val_windows = 64\n" + dataset_table + "[optim]\nname = \"adamw\"\nlr = 3e-3\n" +
         "[train]\nepochs = " + std::to_string(epochs) + "\nsteps_per_epoch = " + std::to_string(steps) +
         "\nlog_interval = 10\n";
}

}  // namespace plugtrain::testing
