// A torch.export graph compiled for running node by node through the ATen dispatcher: each
// node's operator found once, its arguments put in the schema's order (defaults filled in), and
// every value given a slot. Running it over tensors that require grad records autograd's graph
// exactly as eager PyTorch does, on any device, under autocast, in any memory format.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>

#include "program.h"

namespace plugtrain::exported {

// How a node's argument gets its value when the node runs.
enum class ArgSource {
  constant,              // fixed at compile time
  value,                 // a slot: a tensor or a symbolic size
  tensor_list,           // slots, as Tensor[]
  optional_tensor_list,  // slots (-1: None), as Tensor?[]
  int_list,              // slots (-1: the fixed value in `ints`), as int[]/SymInt[]
  device,                // the device the user's input is on (exported graphs name the CPU)
  training,              // batch_norm's `training`, dropout's `train`: the module's mode
  dropout_p,             // attention's dropout_p: `constant` in train(), 0 in eval()
};

struct CompiledArg {
  ArgSource source = ArgSource::constant;
  c10::IValue constant;
  int slot = -1;
  std::vector<int> slots;
  std::vector<std::int64_t> ints;
};

// Integer arithmetic on symbolic sizes (Python's operator module) and size queries; `fused`: a
// node the graph pass made of several (graph_fusion.h).
enum class NodeKind { op, sym_size, sym_numel, int_arith, fused };

// What a fused node computes (graph_fusion.h): linear then GELU (exact or tanh), add then LayerNorm.
enum class Fusion { none, linear_gelu, add_layer_norm };

struct CompiledNode {
  std::string name;    // the graph's name for the node ("conv2d_3")
  std::string target;  // "aten::conv2d", "_operator.mul"
  NodeKind kind = NodeKind::op;
  std::optional<c10::OperatorHandle> op;
  std::vector<CompiledArg> args;
  std::vector<int> outputs;                    // per return: a slot, or -1 (unused)
  std::vector<std::vector<int>> list_outputs;  // per return that is Tensor[]: its slots
  bool training_only = false;                  // eval() skips it (num_batches_tracked += 1)
  std::string module;                          // the top-level submodule it runs in ("": the root's own)
  Fusion fusion = Fusion::none;                // kind fused: what it computes
  std::vector<CompiledNode> unfused;           // kind fused: the nodes it replaced, run where it does not apply
};

// What the graph pass (graph_fusion.h) did to a graph.
struct GraphPassCounts {
  std::size_t nodes_before = 0, nodes_after = 0;
  std::size_t dropped = 0;  // view, copy and dropout nodes that did nothing
  std::size_t linear_gelu = 0, add_layer_norm = 0;
};

class GraphProgram {
 public:
  // Throws ProgramError naming the file, node and operator for anything it cannot run.
  explicit GraphProgram(const Program& program);

  int slot_count() const { return slot_count_; }
  // The slot of a graph value by name (inputs and outputs), -1 if none.
  int slot_of(const std::string& value) const;
  // Throws ProgramError naming the first node whose operator has no kernel for `device`'s backend.
  void check_kernels(const c10::Device& device) const;
  // Runs every node over `values` (the inputs' slots filled in).
  void run(std::vector<c10::IValue>& values, bool training, const c10::Device& device) const {
    run_nodes(values, 0, nodes_.size(), training, device);
  }
  // Runs nodes [begin, end).
  void run_nodes(std::vector<c10::IValue>& values, std::size_t begin, std::size_t end, bool training,
                 const c10::Device& device) const;
  const std::vector<CompiledNode>& nodes() const { return nodes_; }
  // The graph pass (graph_fusion.cpp): drops nodes that do nothing and fuses linear+GELU and
  // add+LayerNorm; `program` is the one this graph was compiled from (its shapes and outputs).
  const GraphPassCounts& optimize(const Program& program);
  const GraphPassCounts& pass_counts() const { return pass_counts_; }

 private:
  std::string file_;
  std::map<std::string, int> slots_;
  int slot_count_ = 0;
  std::vector<CompiledNode> nodes_;
  GraphPassCounts pass_counts_;

  int slot(const std::string& value);                                 // a value defined here
  int use(const std::string& value, const CompiledNode& node) const;  // one defined before
  void check_size_node(const CompiledNode& node) const;
  void check_constant_size(const c10::FunctionSchema& schema, const c10::Argument& argument, const CompiledArg& arg,
                           const CompiledNode& node) const;
  CompiledNode compile(const nlohmann::json& node, const std::set<std::string>& train_only_buffers);
  CompiledArg compile_arg(const nlohmann::json& arg, const c10::Argument* schema, const CompiledNode& node) const;
  void compile_outputs(const nlohmann::json& outputs, CompiledNode& node);
  [[noreturn]] void fail(const CompiledNode& node, const std::string& why) const;
};

}  // namespace plugtrain::exported
