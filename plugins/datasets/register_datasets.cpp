// The bundled data-sets plugin: the readers every plugtrain build ships, registered through the
// same SDK interface (plugtrain/dataset.h) as any vendor's or user's data set.
//   fashion-mnist, mnist   IDX files (plain or .gz)                      one class per image
//   cifar10, cifar100      the binary version, a folder or the .tar.gz   one class per image
//   image-folder           train/<class>/*.png|jpg, val/ or test/        one class per image
//   tiny-imagenet          Tiny ImageNet's own layout (wnids, val annotations)
//   synthetic              seeded data for whatever the run's task learns
//   text, tokens           a UTF-8 text file, or nanoGPT's train.bin/val.bin: windows and next tokens
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "readers.h"
#include "readers/text_corpus.h"
#include "readers/tokenizer_files.h"

namespace {

using plugtrain::DatasetPathCheck;
using plugtrain::DatasetQuery;
using plugtrain::DatasetRead;
using plugtrain::DatasetSpec;
using plugtrain::DatasetTargets;
using plugtrain::OptionRule;
using plugtrain::OptionSpec;
using plugtrain::OptionType;
using plugtrain::Options;

DatasetSpec spec(std::string name, std::string description, DatasetTargets targets = DatasetTargets::class_index,
                 std::vector<OptionSpec> options = {}) {
  DatasetSpec s;
  s.name = std::move(name);
  s.description = std::move(description);
  s.targets = targets;
  s.options = std::move(options);
  return s;
}

// Registers `s` with its reader and its check of data.path (may be empty).
void add(plugtrain::Registrar& host, DatasetSpec s, std::vector<OptionRule> rules,
         std::function<DatasetRead(const DatasetQuery&, const Options&)> read, DatasetPathCheck check) {
  s.read = std::move(read);
  s.check = std::move(check);
  s.rules = std::move(rules);
  host.add_dataset(std::move(s));
}

// Windows of tokens for the language_model task (readers/text_corpus.h).
std::vector<OptionSpec> window_options() {
  return {{"context", OptionType::integer, std::int64_t{64}, "tokens per window (nanoGPT's block_size)"},
          {"eval_stride", OptionType::integer, std::int64_t{0}, "tokens between val windows (0: context, every val token once)"},
          {"val_windows", OptionType::integer, std::int64_t{0}, "at most this many val windows, spread evenly (0: all)"}};
}

void add_text_datasets(plugtrain::Registrar& host) {
  using namespace bundled_datasets;
  std::vector<OptionSpec> text_options = window_options();
  text_options.push_back({"vocabulary", OptionType::string, std::string("char"),
                          "char (the training split's characters), byte (the 256 byte values), bpe (the "
                          "tokenizer's byte-level BPE tokens) or sentencepiece (a SentencePiece model's pieces)"});
  text_options.push_back({"tokenizer", OptionType::string, std::string(""),
                          "vocabulary bpe: a Hugging Face tokenizer.json of GPT-2's kind (byte-level BPE); "
                          "vocabulary sentencepiece: a SentencePiece .model; a relative path is relative to the "
                          "working folder"});
  text_options.push_back({"train_tokenizer", OptionType::string, std::string(""),
                          "vocabulary sentencepiece without a tokenizer: train a bpe or unigram model on the training "
                          "split (kept in ~/.cache/plugtrain/tokenizers, by the text's and the settings' checksums)"});
  text_options.push_back({"tokenizer_pieces", OptionType::integer, std::int64_t{2000},
                          "train_tokenizer: the pieces of the trained model"});
  text_options.push_back({"val_fraction", OptionType::real, 0.1, "the last share of the text that is the val split"});
  const std::vector<OptionRule> window_rules = {OptionRule("context").at_least(1), OptionRule("eval_stride").at_least(0),
                                                OptionRule("val_windows").at_least(0)};
  std::vector<OptionRule> text_rules = window_rules;
  text_rules.push_back(OptionRule("vocabulary").one_of({"char", "byte", "bpe", "sentencepiece"}));
  text_rules.push_back(OptionRule("train_tokenizer").one_of({"", "bpe", "unigram"}));
  text_rules.push_back(OptionRule("tokenizer_pieces").at_least(16));
  text_rules.push_back(OptionRule("val_fraction").above(0).below(1));
  DatasetSpec text = spec("text",
                          "a UTF-8 text file (plain or .gz) in data.path, as windows of characters, bytes "
                          "or BPE tokens and the next token of each: split by [dataset] val_fraction",
                          DatasetTargets::next_token, text_options);
  text.validation_split = "val";
  text.tokenizer = open_tokenizer;
  add(
      host, text, text_rules, [](const DatasetQuery& q, const Options& o) { return read_text(q, o); },
      [](const DatasetQuery& q, const Options& o) {
        check_text_path(q);
        check_text_tokenizer(o);
      });
  std::vector<OptionSpec> tokens_options = window_options();
  tokens_options.push_back({"tokenizer", OptionType::string, std::string(""),
                            "the tokenizer the ids came from (a tokenizer.json or a SentencePiece .model): generate "
                            "then prints text; a relative path is relative to the working folder"});
  DatasetSpec tokens = spec("tokens",
                            "nanoGPT's layout in data.path: train.bin and val.bin (uint16 token ids, or uint32) "
                            "and meta.json (vocab_size, optional itos and dtype)",
                            DatasetTargets::next_token, tokens_options);
  tokens.validation_split = "val";
  tokens.tokenizer = open_tokenizer;
  add(
      host, tokens, window_rules, [](const DatasetQuery& q, const Options& o) { return read_tokens(q, o); },
      [](const DatasetQuery& q, const Options& o) {
        check_tokens_path(q);
        if (!o.string("tokenizer").empty()) open_tokenizer(o.string("tokenizer"));  // refused before any work
      });
}

void register_datasets(plugtrain::Registrar& host) {
  using namespace bundled_datasets;
  for (const char* name : {"fashion-mnist", "mnist"})
    add(host,
        spec(name, std::string(name) + ": IDX files in data.path (train-/t10k-images-idx3-ubyte, plain or .gz), 10 classes"),
        {}, [name](const DatasetQuery& q, const Options& o) { return read_idx(q, o, name); },
        [name](const DatasetQuery& q, const Options&) { check_folder(q, name, false); });

  add(host, spec("cifar10", "CIFAR-10, binary version: its folder or the official .tar.gz, 10 classes"), {},
      [](const DatasetQuery& q, const Options& o) { return read_cifar(q, o, false); },
      [](const DatasetQuery& q, const Options&) { check_folder(q, "cifar10", true); });
  add(host,
      spec("cifar100", "CIFAR-100, binary version: its folder or the official .tar.gz",
           DatasetTargets::class_index,
           {{"label", OptionType::string, std::string("fine"), "fine (100 classes) or coarse (20 superclasses); also data.label"}}),
      {OptionRule("label").one_of({"fine", "coarse"})},
      [](const DatasetQuery& q, const Options& o) { return read_cifar(q, o, true); },
      [](const DatasetQuery& q, const Options&) { check_folder(q, "cifar100", true); });

  add(host, spec("image-folder", "PNG/JPEG files in train/<class>/ and val/<class>/ (or test/), decoded to data.image_size"),
      {}, [](const DatasetQuery& q, const Options&) { return read_images(q, false); },
      [](const DatasetQuery& q, const Options&) { check_folder(q, "image-folder", false); });
  DatasetSpec tiny_imagenet = spec("tiny-imagenet",
                                   "Tiny ImageNet's layout (wnids.txt, words.txt, train/<wnid>/images, val annotations), "
                                   "200 classes; its test images have no labels");
  tiny_imagenet.validation_split = "val";
  add(host, tiny_imagenet, {}, [](const DatasetQuery& q, const Options&) { return read_images(q, true); },
      [](const DatasetQuery& q, const Options&) { check_folder(q, "tiny-imagenet", false); });

  add(host,
      spec("synthetic",
           "seeded learnable data (a prototype per class plus noise) for whatever the run's task learns; no files",
           DatasetTargets::as_task,
           {{"shape", OptionType::integer_list, std::vector<std::int64_t>{1, 28, 28}, "sample shape [C, H, W]; also data.synthetic_shape"},
            {"classes", OptionType::integer, std::int64_t{10}, "number of classes; also data.synthetic_classes"},
            {"train_size", OptionType::integer, std::int64_t{2000}, "training samples; also data.synthetic_train_size"},
            {"test_size", OptionType::integer, std::int64_t{500}, "test samples; also data.synthetic_test_size"}}),
      {OptionRule("shape").at_least(1).length(3, 3), OptionRule("classes").at_least(2), OptionRule("train_size").at_least(1),
       OptionRule("test_size").at_least(1)},
      [](const DatasetQuery& q, const Options& o) { return read_synthetic(q, o); }, {});
  add_text_datasets(host);
}

}  // namespace

PLUGTRAIN_PLUGIN(register_datasets, PLUGTRAIN_KIND_DATASETS, "datasets", "1.0.0",
                 "The bundled data sets: fashion-mnist, mnist, cifar10, cifar100, image-folder, tiny-imagenet, synthetic, "
                 "text, tokens")
