// The tokens data set (text_corpus.h): nanoGPT's layout, train.bin and val.bin of uint16 (or
// uint32) token ids and meta.json with the vocabulary size and, optionally, each id's text, or a
// [dataset] tokenizer the ids came from.
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "readers/text_corpus.h"
#include "readers/token_bin.h"
#include "readers/token_windows.h"
#include "readers/tokenizer_files.h"

namespace bundled_datasets {

using plugtrain::DatasetQuery;
using plugtrain::DatasetRead;
using plugtrain::Options;

namespace {

namespace fs = std::filesystem;

[[noreturn]] void refuse_tokens(const std::string& line) { throw std::runtime_error(line); }

// meta.json: vocab_size, and optionally itos (each id's text) and dtype ("uint16", nanoGPT's, or
// "uint32" for vocabularies over 65,536).
struct TokensMeta {
  std::int64_t vocabulary = 0;
  int width = 2;
  std::vector<std::string> names;
};

TokensMeta read_meta(const fs::path& meta_file) {
  std::ifstream meta_in(meta_file);
  if (!meta_in) refuse_tokens("'" + meta_file.string() + "': missing (it gives vocab_size, and may give itos)");
  nlohmann::json meta;
  try {
    meta = nlohmann::json::parse(meta_in);
  } catch (const std::exception& e) {
    refuse_tokens("'" + meta_file.string() + "': not JSON (" + std::string(e.what()) + ")");
  }
  if (!meta.is_object()) refuse_tokens("'" + meta_file.string() + "': not a JSON object (it gives vocab_size)");
  TokensMeta m;
  const nlohmann::json dtype = meta.contains("dtype") ? meta["dtype"] : nlohmann::json("uint16");
  if (dtype != "uint16" && dtype != "uint32")
    refuse_tokens("'" + meta_file.string() + "': dtype " +
                  dtype.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace).substr(0, 64) +
                  " is not \"uint16\" or \"uint32\"");
  m.width = dtype == "uint32" ? 4 : 2;
  const std::int64_t largest = m.width == 4 ? (std::int64_t(1) << 31) : 65536;
  if (!meta.contains("vocab_size") || !meta["vocab_size"].is_number_integer() ||
      meta["vocab_size"].get<std::int64_t>() < 1 || meta["vocab_size"].get<std::int64_t>() > largest)
    refuse_tokens("'" + meta_file.string() + "': vocab_size must be an integer from 1 to " + std::to_string(largest) +
                  " (" + dtype.get<std::string>() + " token ids)");
  m.vocabulary = meta["vocab_size"].get<std::int64_t>();
  if (meta.contains("itos")) {
    if (!meta["itos"].is_array() || std::int64_t(meta["itos"].size()) != m.vocabulary)
      refuse_tokens("'" + meta_file.string() + "': itos must list one string per token id (" +
                    std::to_string(m.vocabulary) + ")");
    for (const auto& s : meta["itos"]) {
      if (!s.is_string())
        refuse_tokens("'" + meta_file.string() + "': itos must list strings (token " + std::to_string(m.names.size()) +
                      " is not one)");
      m.names.push_back(s.get<std::string>());
    }
  }
  return m;
}

}  // namespace

DatasetRead read_tokens(const DatasetQuery& query, const Options& options) {
  const fs::path folder = query.path();
  TokensMeta meta = read_meta(folder / "meta.json");
  std::string tokenizer_file;
  if (!options.string("tokenizer").empty()) {  // the ids' text, for generate (SDK 4.2)
    tokenizer_file = fs::absolute(options.string("tokenizer")).string();
    const std::unique_ptr<plugtrain::Tokenizer> tokenizer = open_tokenizer(tokenizer_file);
    if (tokenizer->size() < meta.vocabulary)
      refuse_tokens("'" + (folder / "meta.json").string() + "': vocab_size " + std::to_string(meta.vocabulary) +
                    " is more than the " + std::to_string(tokenizer->size()) + " tokens of [dataset] tokenizer '" +
                    tokenizer_file + "': not the tokenizer these ids came from");
    meta.names.clear();
    for (std::int64_t id = 0; id < meta.vocabulary; ++id) meta.names.push_back(tokenizer->piece(id));
  }
  const at::Tensor train = read_token_file(folder / "train.bin", meta.vocabulary, meta.width);
  const at::Tensor val = read_token_file(folder / "val.bin", meta.vocabulary, meta.width);
  DatasetRead read = windows_read(train, val, options, "'" + folder.string() + "'");
  read.num_classes = meta.vocabulary;
  read.class_names = meta.names;
  read.tokenizer_file = tokenizer_file;
  read.source = "tokens from " + folder.string() + " (" + std::to_string(train.numel()) + " training and " +
                std::to_string(val.numel()) + " val tokens, vocabulary " + std::to_string(meta.vocabulary) + ")";
  return read;
}

void check_tokens_path(const DatasetQuery& query) {
  const fs::path folder = query.path();
  std::error_code ec;
  for (const char* file : {"train.bin", "val.bin", "meta.json"})
    if (!fs::is_regular_file(folder / file, ec))
      refuse_tokens("data.path '" + folder.string() + "' has no " + file +
                    " (the tokens data set reads nanoGPT's layout: "
                    "train.bin and val.bin of uint16 token ids, and meta.json)");
}

}  // namespace bundled_datasets
