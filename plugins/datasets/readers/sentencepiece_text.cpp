#include "readers/sentencepiece_text.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "readers/sentencepiece_tokenizer.h"
#include "readers/token_cache.h"

namespace bundled_datasets {

namespace {

namespace fs = std::filesystem;

// The cached model's name: the training settings, and the text's checksums and length.
std::string model_name(const std::string& text, const SentencePieceTraining& how) {
  return "sentencepiece-" + how.type + "-" + std::to_string(how.pieces) + "-" + bytes_key(text) + ".model";
}

// The model trained on `training_text`, from the cache or trained into it. A lock on the cache
// folder makes the processes of one run (ddp's ranks read the data set each) train it once and
// all read the same model.
fs::path cached_model(const std::string& path, const std::string& training_text, const SentencePieceTraining& how) {
  const fs::path folder = plugtrain_cache("tokenizers");
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

std::string sentencepiece_model_file(const std::string& path, const std::string& training_text,
                                     const plugtrain::Options& options) {
  // One of the two is set (check_text_tokenizer, when the data set is validated).
  const std::string named = options.string("tokenizer");
  if (!named.empty()) return named;
  const SentencePieceTraining how{options.string("train_tokenizer"), options.integer("tokenizer_pieces")};
  return cached_model(path, training_text, how).string();
}

}  // namespace bundled_datasets
