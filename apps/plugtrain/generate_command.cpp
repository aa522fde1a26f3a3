#include <iostream>

#include "commands.h"
#include "use/generate.h"

namespace plugtrain::cli {

void add_generate_command(CLI::App& app) {
  struct Args {
    GenerateRequest request;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  TrainedRunRequest& source = args->request.source;
  CLI::App* cmd = app.add_subcommand(
      "generate", "Text from a trained language model (task language_model): tokens drawn one at a time after the "
                  "prompt, as nanoGPT's sample.py; the same seed gives the same text");
  cmd->add_option("source", source.given,
                  "A run's folder (runs/<name>/version_N: its best.ckpt, else last.ckpt) or a checkpoint in its "
                  "checkpoints/")
      ->required();
  cmd->add_option("--prompt", args->request.prompt, "Text the generation continues (default: a newline)");
  cmd->add_option("--tokens", args->request.tokens, "Tokens to generate (default 200)")->check(CLI::PositiveNumber);
  cmd->add_option("--temperature", args->request.temperature,
                  "Divides the scores before sampling: below 1 surer, above 1 more varied; 0 takes the most likely token "
                  "(default 1)")
      ->check(CLI::Range(0.0, 100.0));
  cmd->add_option("--top-k", args->request.top_k, "Sample among the k most likely tokens only (default 0: all)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", args->request.seed, "Seed of the sampling (default 1337)");
  cmd->add_option("--set", source.overrides, "Override a key of the run's experiment, e.g. --set backend.name=cpu");
  cmd->add_flag("--json", args->json, "Print one JSON object: prompt, text, tokens, seed");
  add_plugin_path_option(*cmd, source.plugin_paths);
  cmd->callback([args] {
    args->request.source.data_not_read = true;
    // The model's line goes to stderr: stdout is the text alone.
    const Generated generated = generate_text(args->request, std::cerr);
    if (args->json) {
      std::cout << generated_json(args->request, generated) << "\n";
      return;
    }
    std::cout << generated.prompt << generated.text << "\n";
  });
}

}  // namespace plugtrain::cli
