// The bundled "exported" models plugin: `[model] name = "exported"` with `file = "net.pt2"`, a
// model exported from Python with torch.export (python/export_model.py), trained like any other.
#include "exported.h"

namespace {

std::shared_ptr<plugtrain::Model> make_exported(const plugtrain::BatchDescription& batch,
                                                const plugtrain::TargetDescription& target,
                                                const plugtrain::Options& options) {
  return plugtrain::exported::make_exported_model(options.string("file"), batch, target, options.boolean("fused"));
}

void register_exported(plugtrain::Registrar& host) {
  plugtrain::ModelSpec spec;
  spec.name = "exported";
  spec.description = "a model exported from Python with torch.export (file = \"net.pt2\"), trained node by node";
  spec.options = {{"file", plugtrain::OptionType::string, std::string(),
                   "the .pt2 archive torch.export.save wrote (python/export_model.py); relative to the working folder"},
                  {"fused", plugtrain::OptionType::boolean, true,
                   "the graph pass: view and copy nodes that do nothing dropped, linear+GELU and add+LayerNorm as "
                   "fused CPU kernels in float32 (the zoo's); false: the graph node by node as exported"}};
  spec.batch_factory = make_exported;
  host.add_model(spec);
}

}  // namespace

PLUGTRAIN_PLUGIN(register_exported, PLUGTRAIN_KIND_MODELS, "exported", "0.1.0",
                 "Models from Python: torch.export programs (.pt2) trained through LibTorch's dispatcher")
