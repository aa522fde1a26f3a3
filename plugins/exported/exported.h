// The exported model's one entry point, for the plugin's registration: kept apart from
// exported_model.h so that registering includes no dispatcher, archive or JSON header.
#pragma once

#include <filesystem>
#include <memory>

#include "plugtrain/model.h"

namespace plugtrain::exported {

// The model `file` (a .pt2 archive) holds, checked against the batch and the target; throws
// ProgramError (a std::runtime_error) naming the file and what is wrong. `graph_pass`: the graph
// as graph_fusion.h rewrites it (no-op nodes dropped, fused kernels), else as exported.
std::shared_ptr<Model> make_exported_model(const std::filesystem::path& file, const BatchDescription& batch,
                                           const TargetDescription& target, bool graph_pass = true);

}  // namespace plugtrain::exported
