#include <iostream>

#include "commands.h"
#include "use/tokenize.h"

namespace plugtrain::cli {

void add_tokenize_command(CLI::App& app) {
  struct Args {
    TokenizeRequest request;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd =
      app.add_subcommand("tokenize",
                         "A text file's token ids and pieces in a language model's tokenizer: a run's (--run) or a "
                         "tokenizer.json or SentencePiece .model (--tokenizer)");
  cmd->add_option("file", args->request.text, "The text to tokenize (- for standard input)")->required();
  cmd->add_option("--run", args->request.run, "A run's folder (or a checkpoint in it): the tokenizer it keeps");
  cmd->add_option("--tokenizer", args->request.tokenizer, "A tokenizer file (tokenizer.json, m.model)");
  cmd->add_flag("--json", args->json,
                "Print one JSON object: tokenizer, vocabulary, bytes, tokens, ids, pieces, round_trip, encode_seconds");
  add_plugin_path_option(*cmd, args->request.plugin_paths);
  cmd->callback([args] {
    const Tokenized t = tokenize_file(args->request);
    std::cout << (args->json ? tokenized_json(t) + "\n" : tokenized_text(t));
  });
}

}  // namespace plugtrain::cli
