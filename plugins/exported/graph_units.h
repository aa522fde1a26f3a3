// An exported graph's units (plugtrain/units.h): the calls of its top-level submodules, as the
// nodes' nn_module_stack records them ("transformer.h.0", "layer1"), where a call can run as a
// unit: its nodes contiguous, one tensor in and one out, its own parameters read by no other
// node, no buffer updated (batch norm's running statistics would be counted twice when
// checkpointing recomputes the call). Other calls run inline, as the root's nodes do.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "graph_program.h"

namespace plugtrain::exported {

struct GraphUnit {
  std::string module;              // the submodule's name ("transformer.h.0")
  std::size_t begin = 0, end = 0;  // its nodes, [begin, end)
  int input = -1, output = -1;     // the tensor it reads from before it, the one it gives after
  std::vector<int> reads;          // every other value it reads from outside (weights, sizes)
  std::set<int> weights;           // the weight slots among them
};

// `weight_slots`: the slots the model binds (parameters, buffers, constants); `result_slots`: the
// graph's outputs.
std::vector<GraphUnit> find_graph_units(const GraphProgram& graph, const std::set<int>& weight_slots,
                                        const std::set<int>& result_slots);

}  // namespace plugtrain::exported
