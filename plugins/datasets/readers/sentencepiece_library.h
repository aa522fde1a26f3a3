// Debian's libsentencepiece, behind a module of its own (plugins/datasets/sentencepiece/) that the
// text data set loads only when a run asks for SentencePiece, with RTLD_DEEPBIND.
//
// Why not link it into the data-sets plugin: libsentencepiece exports its command-line flags as
// global symbols (FLAGS_minloglevel, an absl flag object), and so does LibTorch's libc10
// (FLAGS_minloglevel, an int, beside FLAGS_caffe2_use_fatal_for_enforce). Loaded into a process
// that already has libc10, its references bind to libc10's, its static initialiser writes a
// flag object over them, and every failed LibTorch check then aborts the process instead of
// throwing. DEEPBIND makes the module and its libraries find their own symbols first.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace bundled_datasets {

// One loaded model. Throws std::runtime_error (SentencePiece's reason) where it cannot answer.
class SentencePieceModel {
 public:
  virtual ~SentencePieceModel() = default;
  virtual std::vector<int> encode(const std::string& text) const = 0;
  virtual std::string decode(const std::vector<int>& ids) const = 0;
  virtual int size() const = 0;
  virtual std::string piece(int id) const = 0;
  virtual bool is_control(int id) const = 0;
  virtual bool is_unknown(int id) const = 0;
  virtual bool is_byte(int id) const = 0;
};

class SentencePieceLibrary {
 public:
  virtual ~SentencePieceLibrary() = default;
  // Throws std::runtime_error with SentencePiece's reason.
  virtual std::unique_ptr<SentencePieceModel> load(const std::string& file) const = 0;
  virtual void train(const std::unordered_map<std::string, std::string>& args) const = 0;
};

// The library, loaded on first use; throws std::runtime_error naming the module when it cannot be.
const SentencePieceLibrary& sentencepiece_library();

}  // namespace bundled_datasets

// The module's one entry point.
extern "C" const bundled_datasets::SentencePieceLibrary* plugtrain_sentencepiece_library();
