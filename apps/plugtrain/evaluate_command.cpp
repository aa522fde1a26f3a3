#include <iostream>

#include "commands.h"
#include "use/evaluate_run.h"

namespace plugtrain::cli {

void add_evaluate_command(CLI::App& app) {
  struct Args {
    EvaluateRequest request;
    std::string split = "test", tta;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  TrainedRunRequest& source = args->request.source;
  CLI::App* cmd = app.add_subcommand(
      "evaluate", "A trained model's loss and metrics on a split of its data, as its run measured them; for a "
                  "classification also the confusion matrix and each class's precision, recall and F1");
  cmd->add_option("source", source.given,
                  "A run's folder (runs/<name>/version_N: its best.ckpt, else last.ckpt), a checkpoint (.ckpt), or "
                  "a Python state_dict (torch.save) with --experiment")
      ->required();
  cmd->add_option("--experiment", source.experiment,
                  "The experiment the weights were trained with, instead of the run's experiment.toml or the "
                  "checkpoint's own record");
  cmd->add_option("--set", source.overrides, "Override a key, as `plugtrain run --set` does (repeatable)");
  cmd->add_option("--split", args->split, "The split to evaluate: test (default), val (data.val_fraction's, or the data set's "
                                            "own) or train")
      ->check(CLI::IsMember({"test", "val", "train"}));
  cmd->add_option("--tta", args->tta,
                  "flip: average each batch's outputs with those of its mirror image (probabilities for classes, "
                  "raw outputs for values)")
      ->check(CLI::IsMember({"flip"}));
  cmd->add_option("--out", args->request.out,
                  "Folder for a classification's confusion.csv, confusion.png, per_class.csv and predictions.csv "
                  "(default: <run folder>/evaluate/<split>, or evaluate-<checkpoint name>/<split> beside a checkpoint)");
  cmd->add_flag("--json", args->json, "Print one JSON object (the run's lines go to stderr)");
  add_plugin_path_option(*cmd, source.plugin_paths);
  cmd->callback([args] {
    EvaluateRequest& request = args->request;
    request.split = args->split == "val" ? Split::val : args->split == "train" ? Split::train : Split::test;
    request.flip = !args->tta.empty();
    // The plan's and the build's lines go to stderr: stdout is the figures alone.
    const EvaluateResult result = evaluate_run(request, std::cerr);
    if (args->json) {
      std::cout << evaluation_json(result) << "\n";
      return;
    }
    std::cout << "evaluated " << result.weights.string() << (result.flip ? " with --tta flip" : "") << "\n"
              << evaluation_line(result) << "\n";
    if (result.classes.empty()) return;
    std::cout << class_table_text(result.classes)
              << "wrote " << result.out.string() << ": confusion.csv, confusion.png, per_class.csv, predictions.csv\n";
  });
}

}  // namespace plugtrain::cli
