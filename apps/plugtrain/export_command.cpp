#include <iostream>

#include "commands.h"
#include "checkpoint/checkpoint.h"

namespace plugtrain::cli {

void add_export_command(CLI::App& app) {
  struct Args {
    std::filesystem::path checkpoint, out;
    std::string format;  // empty: from the output's name
    bool ema = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "export", "Write a checkpoint's weights as a state_dict that Python reads directly: a torch.load file, or "
                "a safetensors file");
  cmd->add_option("checkpoint", args->checkpoint, "A plugtrain checkpoint (.ckpt)")->required();
  cmd->add_option("out", args->out, "Output file, e.g. model.pt or model.safetensors")->required();
  cmd->add_option("--format", args->format,
                  "torch: a torch.save file for torch.load (the default); safetensors: for "
                  "safetensors.torch.load_file (the default when OUT ends with .safetensors)")
      ->check(CLI::IsMember({"torch", "safetensors"}));
  cmd->add_flag("--ema", args->ema, "Export the EMA of the weights (a run with train.ema_decay) instead of the weights");
  cmd->callback([args] {
    const bool safetensors =
        args->format == "safetensors" || (args->format.empty() && args->out.extension() == ".safetensors");
    export_weights(args->checkpoint, args->out, safetensors ? ExportFormat::safetensors : ExportFormat::torch,
                   args->ema);
    const std::string out = args->out.string();
    std::cout << "wrote " << (args->ema ? "the EMA weights to " : "");
    if (safetensors)
      std::cout << out << " (Python: safetensors.torch.load_file(\"" << out << "\"))\n";
    else
      std::cout << out << " (Python: model.load_state_dict(torch.load(\"" << out << "\")))\n";
  });
}

}  // namespace plugtrain::cli
