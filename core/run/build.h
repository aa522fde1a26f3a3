// Stage 4 of a run: the data (seeded), the model (and its replicas for dp), the optimizer,
// the strategy, the precision and the callbacks, ready for Trainer::fit(). Without outputs
// (a command that only times a few steps) no file-writing callback is made.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>

#include "data/dataset.h"
#include "data/load_dataset.h"
#include "data/model_description.h"
#include "process/process_settings.h"
#include "run/outputs.h"
#include "run/plan.h"
#include "run/validate.h"
#include "train/trainer.h"

namespace plugtrain {

class Collectives;

struct BuiltRun {
  // First, so it is the last to go: the process settings this run changed are put back once
  // nothing of the run is left.
  ProcessSettingsScope process_settings;
  data::DatasetPair data;
  std::shared_ptr<Model> model;
  std::int64_t parameters = 0;
  std::unique_ptr<Trainer> trainer;
};

// A run's normalization.json (the per-channel statistics data.normalize = "dataset" computed
// when it began); nullopt when there is none. Throws Error naming the file when it is not one.
std::optional<data::Normalization> read_normalization(const std::filesystem::path& file);

// The experiment's model from its plugin's factory (a PluginError when it gives none).
// What the model is told of its batch and target: the training split's inputs (float32 as the
// loader normalises them) and fields, its targets, and the task's model_outputs.
ModelDescription model_description(const data::Dataset& train, std::int64_t model_outputs);
std::shared_ptr<Model> build_model(const RegisteredModel& entry, const ModelDescription& description, const Experiment& e);
// An image model: "input" float32 of `input_shape` per sample, `classes` outputs (benchmarks).
std::shared_ptr<Model> build_image_model(const RegisteredModel& entry, const std::vector<std::int64_t>& input_shape,
                                         std::int64_t classes, const Options& options);

// ddp: connects this rank to the others (blocks until every rank has come, at most the
// distributed timeout). Null for a run of one process.
std::unique_ptr<Collectives> connect_ranks(const RunPlan& plan, const Experiment& e);

// `collectives`: this rank's connection in a ddp run, else null. `outputs`: null for no files.
std::unique_ptr<BuiltRun> build_run(const ValidatedRun& run, const RunPlan& plan, Collectives* collectives,
                                    const RunOutputs* outputs, std::ostream& log);

}  // namespace plugtrain
