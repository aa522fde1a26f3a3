// The tokens data set (text_corpus.h): nanoGPT's layout, train.bin and val.bin of uint16 token
// ids and meta.json with the vocabulary size and, optionally, each id's text.
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "readers/text_corpus.h"
#include "readers/token_windows.h"

namespace bundled_datasets {

using plugtrain::DatasetQuery;
using plugtrain::DatasetRead;
using plugtrain::Options;

namespace {

namespace fs = std::filesystem;

[[noreturn]] void refuse_tokens(const std::string& line) { throw std::runtime_error(line); }

// A .bin of little-endian uint16 token ids, each below `vocabulary`.
at::Tensor read_token_file(const fs::path& file, std::int64_t vocabulary) {
  std::ifstream in(file, std::ios::binary);
  if (!in) refuse_tokens("'" + file.string() + "': cannot be opened");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() % 2 != 0)
    refuse_tokens("'" + file.string() + "': " + std::to_string(bytes.size()) +
                  " bytes, not a whole number of uint16 token ids");
  const std::int64_t count = std::int64_t(bytes.size() / 2);
  at::Tensor ids = at::empty({count}, at::TensorOptions().dtype(at::kLong));
  auto* out = ids.data_ptr<std::int64_t>();
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  for (std::int64_t i = 0; i < count; ++i) {
    out[i] = std::int64_t(p[2 * i]) | (std::int64_t(p[2 * i + 1]) << 8);
    if (out[i] >= vocabulary)
      refuse_tokens("'" + file.string() + "': token id " + std::to_string(out[i]) + " at position " +
                    std::to_string(i) + " is at or above the vocabulary size " + std::to_string(vocabulary) +
                    " (meta.json)");
  }
  return ids;
}

}  // namespace

DatasetRead read_tokens(const DatasetQuery& query, const Options& options) {
  const fs::path folder = query.path();
  const fs::path meta_file = folder / "meta.json";
  std::ifstream meta_in(meta_file);
  if (!meta_in) refuse_tokens("'" + meta_file.string() + "': missing (it gives vocab_size, and may give itos)");
  nlohmann::json meta;
  try {
    meta = nlohmann::json::parse(meta_in);
  } catch (const std::exception& e) {
    refuse_tokens("'" + meta_file.string() + "': not JSON (" + std::string(e.what()) + ")");
  }
  if (!meta.contains("vocab_size") || !meta["vocab_size"].is_number_integer() ||
      meta["vocab_size"].get<std::int64_t>() < 1 || meta["vocab_size"].get<std::int64_t>() > 65536)
    refuse_tokens("'" + meta_file.string() + "': vocab_size must be an integer from 1 to 65536 (uint16 token ids)");
  const std::int64_t vocabulary = meta["vocab_size"].get<std::int64_t>();
  std::vector<std::string> names;
  if (meta.contains("itos")) {
    if (!meta["itos"].is_array() || std::int64_t(meta["itos"].size()) != vocabulary)
      refuse_tokens("'" + meta_file.string() + "': itos must list one string per token id (" +
                    std::to_string(vocabulary) + ")");
    for (const auto& s : meta["itos"]) {
      if (!s.is_string())
        refuse_tokens("'" + meta_file.string() + "': itos must list strings (token " + std::to_string(names.size()) +
                      " is not one)");
      names.push_back(s.get<std::string>());
    }
  }
  const at::Tensor train = read_token_file(folder / "train.bin", vocabulary);
  const at::Tensor val = read_token_file(folder / "val.bin", vocabulary);
  DatasetRead read = windows_read(train, val, options, "'" + folder.string() + "'");
  read.num_classes = vocabulary;
  read.class_names = names;
  read.source = "tokens from " + folder.string() + " (" + std::to_string(train.numel()) + " training and " +
                std::to_string(val.numel()) + " val tokens, vocabulary " + std::to_string(vocabulary) + ")";
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
