// A benchmark's plugtrain row, built exactly as `plugtrain run` builds a run: the experiment
// file validated, planned and built by the run's own stages (core/run), with --set overrides
// on top, but no run folder, and the log kept in memory. So the row measures the defaults a user gets (the
// memory format, the optimizer's implementation, the loader, the host heap, ...); a row that
// deviates says so through its overrides.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "run/build.h"
#include "run/plan.h"
#include "run/validate.h"

namespace plugtrain::bench {

// The [optim] and [train] tables of examples/cifar10_resnet18.toml's recipe (SGD lr 0.1,
// Nesterov momentum 0.9, weight decay 5e-4), for one epoch without step lines: what the
// convolutional benchmarks and their Python peers train with.
inline constexpr const char* kSgdRecipeTables = R"([optim]
name = "sgd"
lr = 0.1
momentum = 0.9
nesterov = true
weight_decay = 5e-4
[train]
epochs = 1
log_interval = 0
)";

struct DefaultRun {
  ValidatedRun run;
  RunPlan plan;
  std::ostringstream log;  // the run's log: its callbacks write here as long as it trains
  std::unique_ptr<BuiltRun> built;
  Trainer& trainer() { return *built->trainer; }
};

inline std::unique_ptr<DefaultRun> build_default_run(const std::filesystem::path& experiment,
                                                     const std::vector<std::string>& overrides) {
  RunRequest request;
  request.experiment_file = experiment;
  request.overrides = overrides;
  auto r = std::make_unique<DefaultRun>();
  r->run = validate(request);
  r->plan = plan_run(r->run, {}, std::nullopt);
  r->built = build_run(r->run, r->plan, nullptr, nullptr, r->log);
  return r;
}

}  // namespace plugtrain::bench
