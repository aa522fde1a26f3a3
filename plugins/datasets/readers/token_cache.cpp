#include "readers/token_cache.h"

#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <stdexcept>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "readers/sentencepiece_text.h"
#include "readers/token_bin.h"
#include "readers/tokenizer_files.h"

namespace bundled_datasets {

namespace fs = std::filesystem;

namespace {

std::string file_content(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("'" + file + "': cannot be opened");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

at::Tensor ids_of(const std::vector<std::int64_t>& ids) {
  return at::tensor(ids, at::TensorOptions().dtype(at::kLong));
}

// The cached streams, when a whole entry is there: meta.json is written last.
bool read_cached(const fs::path& entry, std::int64_t vocabulary, SubwordStreams& s) {
  std::error_code ec;
  if (!fs::is_regular_file(entry / "meta.json", ec)) return false;
  const int width = token_width(vocabulary);
  s.train = read_token_file(entry / "train.bin", vocabulary, width);
  s.val = read_token_file(entry / "val.bin", vocabulary, width);
  return true;
}

void write_cached(const fs::path& entry, std::int64_t vocabulary, const std::vector<std::int64_t>& train,
                  const std::vector<std::int64_t>& val, const std::string& text_path, const std::string& tokenizer) {
  std::error_code ec;
  fs::create_directories(entry, ec);
  if (ec) return;  // a cache that cannot be written costs the next run time, not this one its data
  const int width = token_width(vocabulary);
  write_token_file(entry / "train.bin", train, width);
  write_token_file(entry / "val.bin", val, width);
  const nlohmann::json meta = {{"vocab_size", vocabulary},
                               {"dtype", width == 4 ? "uint32" : "uint16"},
                               {"text", text_path},
                               {"tokenizer", tokenizer}};
  const fs::path partial = entry / ("meta.json." + std::to_string(::getpid()) + ".partial");
  std::ofstream(partial) << meta.dump(2) << "\n";
  fs::rename(partial, entry / "meta.json", ec);
}

std::string count_text(double n) {
  char s[32];
  std::snprintf(s, sizeof s,
                n >= 1e6   ? "%.2fM"
                : n >= 1e3 ? "%.1fk"
                           : "%.0f",
                n >= 1e6   ? n / 1e6
                : n >= 1e3 ? n / 1e3
                           : n);
  return s;
}

}  // namespace

fs::path plugtrain_cache(const std::string& what) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const fs::path base = xdg && *xdg ? fs::path(xdg) : fs::path(home && *home ? home : "/tmp") / ".cache";
  return base / "plugtrain" / what;
}

std::string bytes_key(const std::string& bytes) {
  const auto* data = reinterpret_cast<const Bytef*>(bytes.data());
  const uLong crc = crc32_z(crc32(0L, Z_NULL, 0), data, bytes.size());
  const uLong adler = adler32_z(adler32(0L, Z_NULL, 0), data, bytes.size());
  char key[64];
  std::snprintf(key, sizeof key, "%08lx%08lx-%zu", crc, adler, bytes.size());
  return key;
}

SubwordStreams subword_streams(const std::string& path, const std::string& text, std::size_t cut,
                               const plugtrain::Options& options) {
  const bool bpe = options.string("vocabulary") == "bpe";
  const std::string model =
      bpe ? options.string("tokenizer") : sentencepiece_model_file(path, text.substr(0, cut), options);
  const std::unique_ptr<plugtrain::Tokenizer> tokenizer =
      bpe ? open_bpe_tokenizer(model) : open_sentencepiece_tokenizer(model);
  SubwordStreams s;
  s.tokenizer_file = fs::absolute(model).string();
  for (std::int64_t id = 0; id < tokenizer->size(); ++id) s.names.push_back(tokenizer->piece(id));
  const fs::path entry =
      plugtrain_cache("tokens") / (bytes_key(text) + "-" + bytes_key(file_content(model)) + "-" + std::to_string(cut));
  std::string how;
  if (read_cached(entry, tokenizer->size(), s)) {
    how = "read from the token cache " + entry.string();
  } else {
    const auto start = std::chrono::steady_clock::now();
    const std::vector<std::int64_t> train = tokenizer->encode(text.substr(0, cut));
    const std::vector<std::int64_t> val = tokenizer->encode(text.substr(cut));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    write_cached(entry, tokenizer->size(), train, val, path, s.tokenizer_file);
    s.train = ids_of(train), s.val = ids_of(val);
    char rate[96];
    std::snprintf(rate, sizeof rate, "tokenized in %.2f s (%s tokens/s), kept in ", seconds,
                  count_text(double(train.size() + val.size()) / std::max(seconds, 1e-9)).c_str());
    how = rate + entry.string();
  }
  s.note = "vocabulary: " + std::to_string(tokenizer->size()) +
           (bpe ? " byte-level BPE tokens of " : " SentencePiece pieces of ") + model + " (" +
           std::to_string(text.size()) + " bytes as " + std::to_string(s.train.numel() + s.val.numel()) + " tokens, " +
           how + ")";
  return s;
}

}  // namespace bundled_datasets
