#include <iostream>

#include "commands.h"
#include "use/predict.h"

namespace plugtrain::cli {

void add_predict_command(CLI::App& app) {
  struct Args {
    PredictRequest request;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  TrainedRunRequest& source = args->request.source;
  CLI::App* cmd = app.add_subcommand(
      "predict", "A trained classifier's most probable classes for image files (JPEG, PNG), made samples as the "
                 "run's were: its channels, size and normalisation; no data set is read");
  cmd->add_option("source", source.given,
                  "A run's folder (runs/<name>/version_N: its best.ckpt, else last.ckpt) or a checkpoint in its "
                  "checkpoints/")
      ->required();
  cmd->add_option("images", args->request.images, "Image files (JPEG or PNG)")->required();
  cmd->add_option("--top-k", args->request.top_k, "Classes printed per image, most probable first (default 5)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--set", source.overrides, "Override a key of the run's experiment, e.g. --set backend.name=cpu");
  cmd->add_flag("--json", args->json, "Print one JSON array, an object per image");
  add_plugin_path_option(*cmd, source.plugin_paths);
  cmd->callback([args] {
    args->request.source.data_not_read = true;
    // The backend's lines go to stderr: stdout is the predictions alone.
    const std::vector<ImagePrediction> predictions = predict_images(args->request, std::cerr);
    if (args->json) {
      std::cout << predictions_json(predictions) << "\n";
      return;
    }
    for (const ImagePrediction& p : predictions) std::cout << prediction_line(p) << "\n";
  });
}

}  // namespace plugtrain::cli
