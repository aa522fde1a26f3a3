// The one table of optimizers: each algorithm, the forms it can step in and what a recorded
// (graph-replayed) step needs. Validation (optim.impl = "fused"), the form chosen per device
// (optim/fused_optimizers.cpp) and the graph decision (run/plan.cpp) read it; a new optimizer
// is a row here, a case in make_optimizer (optim/optimizers.cpp) and its algorithm in
// core/train. docs/experiment.md's optimizer table is optimizer_docs_table() (a test compares).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/choices.h"

namespace plugtrain {

struct OptimizerRow {
  OptimizerName name;
  const char* algorithm;     // one line, for docs and `plugtrain models`-style listings
  const char* fused_kernel;  // ATen's one-pass kernel ("aten::_fused_adam_"); nullptr: none.
                             // Every optimizer also steps in the foreach and loop forms.
  std::vector<const char*> keys;  // the optim.* keys it reads beyond name, impl, lr and weight_decay
};

const std::vector<OptimizerRow>& optimizer_table();
const OptimizerRow& optimizer_row(OptimizerName name);
std::vector<std::string> optimizers_with_fused_kernel();  // "sgd", "adam", "adamw"

// Whether a step of this optimizer and optim.impl may be replayed from a recorded graph: only
// the fused form reads its learning rate and step counts from device tensors.
bool may_be_replayable(OptimizerName name, std::optional<OptimizerImpl> impl);
const char* not_replayable_reason();

// The table as docs/experiment.md shows it (Markdown): name, algorithm, forms, whether a
// recorded step can replay it, and the keys it reads.
std::string optimizer_docs_table();

}  // namespace plugtrain
