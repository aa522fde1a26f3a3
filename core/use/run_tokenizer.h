// A language model's tokenizer, as `generate` and `tokenize` open it: the copy a run keeps
// (classes.json's "tokenizer", run/classes_file.h) or a file the user names, opened by the data
// set plugin that reads that kind of file (its TokenizerOpener, SDK 4.2).
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "plugins/plugin_host.h"
#include "plugtrain/dataset.h"

namespace plugtrain {

struct OpenedTokenizer {
  std::unique_ptr<Tokenizer> tokenizer;
  std::string dataset;  // the data set whose opener read it ("text")
  std::filesystem::path file;
};

// Opens `file` with `dataset`'s opener; Error (exit 2, one line) naming the data set, its plugin
// and the file when it has none or the opener refuses it.
OpenedTokenizer open_tokenizer_with(const RegisteredDataset& dataset, const std::filesystem::path& file);

// Opens `file` with the first data set of `host` whose opener takes it; Error with each one's
// reason when none does.
OpenedTokenizer open_tokenizer_file(const PluginHost& host, const std::filesystem::path& file);

}  // namespace plugtrain
