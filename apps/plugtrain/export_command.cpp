#include <iostream>

#include "commands.h"
#include "checkpoint/checkpoint.h"

namespace plugtrain::cli {

void add_export_command(CLI::App& app) {
  struct Args {
    std::filesystem::path checkpoint, out;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "export", "Write a checkpoint's weights as a state_dict that Python's torch.load reads directly");
  cmd->add_option("checkpoint", args->checkpoint, "A plugtrain checkpoint (.ckpt)")->required();
  cmd->add_option("out", args->out, "Output file, e.g. model.pt")->required();
  cmd->callback([args] {
    export_state_dict(args->checkpoint, args->out);
    std::cout << "wrote " << args->out.string() << " (Python: model.load_state_dict(torch.load(\""
              << args->out.string() << "\")))\n";
  });
}

}  // namespace plugtrain::cli
