// The keys of what a run is: [experiment], [backend], [plugins], [model] and [task].
#include "config/experiment_schema_parts.h"

#include "config/schema_keys.h"

namespace plugtrain {

std::vector<ConfigKey> setup_keys() {
  using namespace schema;
  using E = Experiment;
  return {
      key("experiment.name", field(&E::experiment, &ExperimentConfig::name),
          "run name; outputs go to the folder output/name", folder_name()),
      key("experiment.seed", field(&E::experiment, &ExperimentConfig::seed),
          "seed for weights, shuffling, augmentation and label noise"),
      resumable(key("experiment.output", field(&E::experiment, &ExperimentConfig::output), "folder for run outputs")),

      resumable(name_or_auto_key("backend.name", field(&E::backend, &BackendConfig::name),
                                 "\"auto\" (best usable in `prefer` order) or a backend plugin name")),
      resumable(choice_key<BackendSelect>(
          "backend.select", field(&E::backend, &BackendConfig::select),
          "with name = \"auto\": priority (the first usable in prefer order) or fastest (a few timed steps "
          "on each usable backend; the choice is cached per machine and experiment, --no-cache measures "
          "again)")),
      resumable(
          key("backend.prefer", field(&E::backend, &BackendConfig::prefer),
              "automatic selection order among usable backends (empty: every loaded backend by the priority its plugin "
              "declares)")),
      resumable(key("backend.disable", field(&E::backend, &BackendConfig::disable),
                    "backends never chosen (plugtrain run --no-gpu disables every one but the host CPU)")),
      resumable(key(
          "backend.force", field(&E::backend, &BackendConfig::force),
          "backends chosen automatically even where their plugin advises passing them over (the Apple GPU on M1/M2); "
          "force_<name> = true is the same")),
      resumable(
          count_or_auto_key("backend.devices", field(&E::backend, &BackendConfig::devices),
                            "devices to train on: N, or \"auto\" (every GPU; one on the CPU); N > 1 starts N processes "
                            "(ddp) or N replicas (dp)")),
      resumable(choice_or_auto_key<RunStrategy>(
          "backend.strategy", field(&E::backend, &BackendConfig::strategy),
          "auto (ddp for several devices, else single), single, dp (replicas in one process), ddp (one process per "
          "device), fsdp (ddp's processes, each keeping only its shard of the model's state: distributed.shard)")),

      resumable(key("plugins.paths", field(&E::plugins, &PluginsConfig::paths),
                    "extra plugin files or folders, absolute paths, searched after --plugin-path", absolute_paths())),

      key("model.name", field(&E::model, &ModelConfig::name),
          "architecture name (see `plugtrain models`); other [model] keys are its options"),

      key("model.init", field(&E::model, &ModelConfig::init),
          "start from these weights: a Python state_dict file (torch.save(model.state_dict())) or a .safetensors "
          "file (Hugging Face, timm; by the extension)"),

      key("task.name", field(&E::task, &TaskConfig::name),
          "what is learnt and measured: classification (default), multilabel, regression, segmentation or sequence "
          "(`plugtrain tasks`); other [task] keys are its options"),
  };
}

}  // namespace plugtrain
