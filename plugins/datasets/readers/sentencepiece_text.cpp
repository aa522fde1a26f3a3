#include "readers/sentencepiece_text.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "readers/sentencepiece_tokenizer.h"

namespace bundled_datasets {

namespace {

namespace fs = std::filesystem;

fs::path tokenizer_cache() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const fs::path base = xdg && *xdg ? fs::path(xdg) : fs::path(home && *home ? home : "/tmp") / ".cache";
  return base / "plugtrain" / "tokenizers";
}

// The cached model's name: the training settings and two checksums and the length of the text.
std::string model_name(const std::string& text, const SentencePieceTraining& how) {
  const auto* bytes = reinterpret_cast<const Bytef*>(text.data());
  const uLong crc = crc32_z(crc32(0L, Z_NULL, 0), bytes, text.size());
  const uLong adler = adler32_z(adler32(0L, Z_NULL, 0), bytes, text.size());
  char name[128];
  std::snprintf(name, sizeof name, "sentencepiece-%s-%lld-%08lx%08lx-%zu.model", how.type.c_str(),
                static_cast<long long>(how.pieces), crc, adler, text.size());
  return name;
}

// The model trained on `training_text`, from the cache or trained into it. A lock on the cache
// folder makes the processes of one run (ddp's ranks read the data set each) train it once and
// all read the same model.
fs::path cached_model(const std::string& path, const std::string& training_text, const SentencePieceTraining& how) {
  const fs::path folder = tokenizer_cache();
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) throw std::runtime_error("'" + folder.string() + "': cannot make the tokenizer cache (" + ec.message() + ")");
  const fs::path model = folder / model_name(training_text, how);
  const int lock = ::open((folder / ".lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (lock >= 0) ::flock(lock, LOCK_EX);
  try {
    if (!fs::exists(model)) {
      const fs::path text_file = folder / (model.stem().string() + "." + std::to_string(::getpid()) + ".txt");
      std::ofstream(text_file, std::ios::binary) << training_text;
      const fs::path partial = folder / (model.stem().string() + "." + std::to_string(::getpid()) + ".model");
      try {
        SentencePieceTokenizer::train(text_file.string(), partial.string(), how);
      } catch (const std::runtime_error&) {
        fs::remove(text_file, ec);
        throw std::runtime_error("'" + path + "' (its training split): SentencePiece cannot train a " + how.type +
                                 " tokenizer of " + std::to_string(how.pieces) +
                                 " pieces on it: lower [dataset] tokenizer_pieces or give more text");
      }
      fs::remove(text_file, ec);
      fs::remove(folder / (partial.stem().string() + ".vocab"), ec);
      fs::rename(partial, model);  // whole or not at all
    }
  } catch (...) {
    if (lock >= 0) ::close(lock);
    throw;
  }
  if (lock >= 0) ::close(lock);
  return model;
}

}  // namespace

TokenStreams sentencepiece_streams(const std::string& path, const std::string& text, std::size_t cut,
                                   const plugtrain::Options& options) {
  // One of the two is set (check_text_tokenizer, when the data set is validated).
  const std::string trained = options.string("train_tokenizer");
  const std::string named = options.string("tokenizer");
  const SentencePieceTraining how{trained, options.integer("tokenizer_pieces")};
  const std::string model = named.empty() ? cached_model(path, text.substr(0, cut), how).string() : named;
  const SentencePieceTokenizer tokenizer(model);
  TokenStreams s;
  s.train = tokenizer.encode(text.substr(0, cut));
  s.val = tokenizer.encode(text.substr(cut));
  s.names = tokenizer.piece_texts();
  s.note = "vocabulary: " + std::to_string(tokenizer.size()) + " SentencePiece pieces of " +
           (named.empty() ? "a " + trained + " model trained on the training split (" + model + ")" : model);
  return s;
}

}  // namespace bundled_datasets
