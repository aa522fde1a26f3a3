// The graph pass over a compiled torch.export graph (GraphProgram::optimize, graph_fusion.cpp),
// the fusions the zoo's transformers take (plugins/models/fused_ops.h) applied to any graph:
//   dropped        nodes that give back their input: an alias, a view, reshape or expand to the
//                  input's own sizes (each size read from the input or fixed equal to its export
//                  shape), a slice over the whole dimension, a flatten of one dimension, dropout
//                  with p = 0, a `to` its own dtype, and a clone in a graph that writes no tensor
//                  in place. Their readers read the input instead. Never a value the program
//                  returns, and never a view whose input or output an operator writes in place.
//   linear_gelu    linear(x, w, b) read only by gelu: x @ w^T, then fused_ops' bias_gelu (the bias
//                  with the GELU in one pass that keeps its derivative).
//   add_layer_norm add(x, a) then layer_norm of the sum over its last dimension: fused_ops'
//                  add_layer_norm gives both (the sum stays for its other readers).
// Fusions join nodes of one top-level submodule only, so the graph's units (graph_units.h) stay.
// A fused node runs its kernels where they apply (float32 CPU tensors, no autocast, the add's
// two sides of one shape) and the nodes it replaced otherwise, so any device and precision runs
// the graph's own arithmetic.
#pragma once

#include <vector>

#include <ATen/core/ivalue.h>

#include "graph_program.h"

namespace plugtrain::exported {

// Runs a fused node's kernels over `values`; false (nothing done) where they do not apply.
bool run_fused_node(const CompiledNode& node, std::vector<c10::IValue>& values);

}  // namespace plugtrain::exported
