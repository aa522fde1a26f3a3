// The module that holds Debian's libsentencepiece (readers/sentencepiece_library.h says why it is
// one of its own): SentencePiece's processor and trainer behind the library interface.
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <stdexcept>

#include "readers/sentencepiece_library.h"

namespace {

using bundled_datasets::SentencePieceLibrary;
using bundled_datasets::SentencePieceModel;

void check(const sentencepiece::util::Status& status) {
  if (!status.ok()) throw std::runtime_error(status.ToString());
}

class Model final : public SentencePieceModel {
 public:
  explicit Model(const std::string& file) { check(processor_.Load(file)); }
  std::vector<int> encode(const std::string& text) const override {
    std::vector<int> ids;
    check(processor_.Encode(text, &ids));
    return ids;
  }
  std::string decode(const std::vector<int>& ids) const override {
    std::string text;
    check(processor_.Decode(ids, &text));
    return text;
  }
  int size() const override { return processor_.GetPieceSize(); }
  std::string piece(int id) const override { return processor_.IdToPiece(id); }
  bool is_control(int id) const override { return processor_.IsControl(id); }
  bool is_unknown(int id) const override { return processor_.IsUnknown(id); }
  bool is_byte(int id) const override { return processor_.IsByte(id); }

 private:
  sentencepiece::SentencePieceProcessor processor_;
};

class Library final : public SentencePieceLibrary {
 public:
  std::unique_ptr<SentencePieceModel> load(const std::string& file) const override {
    return std::make_unique<Model>(file);
  }
  void train(const std::unordered_map<std::string, std::string>& args) const override {
    check(sentencepiece::SentencePieceTrainer::Train(args));
  }
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const SentencePieceLibrary* plugtrain_sentencepiece_library() {
  static const Library library;
  return &library;
}
