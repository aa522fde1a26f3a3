// Stage 4's strategy (run/build.h): how a step spreads over devices and processes (single, dp,
// ddp, fsdp), with the model's units checkpointed where train.activation_checkpointing asks.
#pragma once

#include <iosfwd>
#include <memory>

#include <c10/core/MemoryFormat.h>

#include "data/model_description.h"
#include "run/plan.h"
#include "run/validate.h"
#include "strategy/training_strategy.h"

namespace plugtrain {

class Collectives;

// `collectives`: this rank's connection in a run of several processes, else null. Throws
// ConfigError (naming the key) for activation checkpointing of a model that declares no units.
std::unique_ptr<TrainingStrategy> make_strategy(const ValidatedRun& run, const RunPlan& plan,
                                                const ModelDescription& description, at::MemoryFormat format,
                                                Collectives* collectives, const std::shared_ptr<Model>& model,
                                                std::ostream& log);

}  // namespace plugtrain
