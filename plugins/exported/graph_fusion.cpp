// The graph pass of graph_fusion.h: what it drops, what it fuses, and how a fused node runs.
#include "graph_fusion.h"

#include <ATen/autocast_mode.h>
#include <ATen/ops/matmul.h>

#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "fused_ops.h"

namespace plugtrain::exported {

namespace {

namespace fused = plugtrain::models::fused;

// What the pass knows of each slot: the node that makes it, its export shape, its readers.
struct SlotFacts {
  std::vector<int> producer;             // node index, -1: a graph input
  std::vector<int> readers;              // how many node arguments read it
  std::vector<bool> written;             // an operator writes it in place
  std::vector<const ValueShape*> shape;  // as exported, nullptr: unknown
  bool any_write = false;                // some operator writes some tensor in place
};

void for_each_read(CompiledNode& node, const std::function<void(int&)>& visit) {
  for (CompiledArg& a : node.args) {
    if (a.source == ArgSource::value) visit(a.slot);
    for (int& s : a.slots)
      if (s >= 0) visit(s);
  }
}

SlotFacts slot_facts(std::vector<CompiledNode>& nodes, int slot_count, const std::map<std::string, int>& slots,
                     const Program& program) {
  SlotFacts f{std::vector<int>(slot_count, -1), std::vector<int>(slot_count, 0), std::vector<bool>(slot_count, false),
              std::vector<const ValueShape*>(slot_count, nullptr)};
  for (const auto& [name, slot] : slots)
    if (const auto it = program.shapes.find(name); it != program.shapes.end()) f.shape[slot] = &it->second;
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    CompiledNode& node = nodes[n];
    for (int s : node.outputs)
      if (s >= 0) f.producer[s] = int(n);
    for (const auto& list : node.list_outputs)
      for (int s : list) f.producer[s] = int(n);
    for_each_read(node, [&](int& s) { ++f.readers[s]; });
    if (!node.op) continue;
    const auto& arguments = node.op->schema().arguments();
    for (std::size_t i = 0; i < arguments.size() && i < node.args.size(); ++i) {
      const c10::AliasInfo* alias = arguments[i].alias_info();
      if (!alias || !alias->isWrite()) continue;
      f.any_write = true;
      if (node.args[i].source == ArgSource::value) f.written[node.args[i].slot] = true;
      for (int s : node.args[i].slots)
        if (s >= 0) f.written[s] = true;
    }
  }
  return f;
}

bool is_constant_int(const CompiledArg& a, std::int64_t want) {
  return a.source == ArgSource::constant && a.constant.isInt() && a.constant.toInt() == want;
}
bool is_none_or_int(const CompiledArg& a, std::int64_t want) {
  return (a.source == ArgSource::constant && a.constant.isNone()) || is_constant_int(a, want);
}

// Whether `sizes` (a view's, reshape's or expand's size argument) is `source`'s own size: each
// entry read from sym_size(source, d) or fixed equal to its exported size d; one -1 may stand
// for the size left.
bool same_sizes(const CompiledArg& sizes, int source, const SlotFacts& f, const std::vector<CompiledNode>& nodes) {
  const ValueShape* shape = f.shape[source];
  if (!shape) return false;
  std::vector<int> slots;
  std::vector<std::int64_t> ints;
  if (sizes.source == ArgSource::constant && sizes.constant.isIntList()) {
    ints = sizes.constant.toIntVector();
    slots.assign(ints.size(), -1);
  } else if (sizes.source == ArgSource::int_list) {
    slots = sizes.slots;
    ints = sizes.ints;
  } else {
    return false;
  }
  if (slots.size() != shape->sizes.size()) return false;
  int free_entries = 0;
  for (std::size_t d = 0; d < slots.size(); ++d) {
    if (slots[d] >= 0) {
      const int p = f.producer[slots[d]];
      const bool read = p >= 0 && nodes[p].kind == NodeKind::sym_size && nodes[p].args[0].slot == source &&
                        is_constant_int(nodes[p].args[1], std::int64_t(d));
      if (!read) return false;
    } else if (ints[d] == -1) {
      ++free_entries;
    } else if (!shape->sizes[d] || *shape->sizes[d] != ints[d]) {
      return false;
    }
  }
  return free_entries <= 1;
}

// The slot a node gives back unchanged (graph_fusion.h's list), or -1.
int passed_through(const CompiledNode& node, const SlotFacts& f, const std::vector<CompiledNode>& nodes) {
  if (!node.op || node.outputs.size() != 1 || node.args.empty() || node.args[0].source != ArgSource::value) return -1;
  const int source = node.args[0].slot;
  const std::string& t = node.target;
  const ValueShape* shape = f.shape[source];
  const auto rank = shape ? std::int64_t(shape->sizes.size()) : -1;
  bool same = false;
  if (t == "aten::alias") {
    same = true;
  } else if (t == "aten::view" || t == "aten::reshape" || t == "aten::_unsafe_view" || t == "aten::expand") {
    same = same_sizes(node.args[1], source, f, nodes);
  } else if (t == "aten::slice.Tensor") {  // (self, dim, start, end, step)
    const CompiledArg& end = node.args[3];
    const bool to_end = (end.source == ArgSource::constant && end.constant.isNone()) ||
                        is_constant_int(end, std::numeric_limits<std::int64_t>::max());
    same = is_none_or_int(node.args[2], 0) && to_end && is_constant_int(node.args[4], 1);
  } else if (t == "aten::flatten.using_ints") {
    const CompiledArg &start = node.args[1], &end = node.args[2];
    same = rank > 0 && start.source == ArgSource::constant && end.source == ArgSource::constant &&
           (start.constant.toInt() + rank) % rank == (end.constant.toInt() + rank) % rank;
  } else if (t == "aten::dropout") {
    same = node.args[1].source == ArgSource::constant && node.args[1].constant.toDouble() == 0.0;
  } else if (t == "aten::to.dtype") {  // (self, dtype, non_blocking, copy, memory_format)
    same = shape && is_constant_int(node.args[1], std::int64_t(shape->dtype)) &&
           node.args[3].source == ArgSource::constant && !node.args[3].constant.toBool() &&
           node.args[4].source == ArgSource::constant && node.args[4].constant.isNone();
  } else if (t == "aten::clone") {
    // A copy: dropping it makes its readers share the input's memory, harmless only where nothing
    // is written in place anywhere.
    const CompiledArg& format = node.args[1];
    same = !f.any_write &&
           (format.constant.isNone() || is_constant_int(format, std::int64_t(c10::MemoryFormat::Preserve)));
  }
  if (!same || f.written[source] || f.written[node.outputs[0]]) return -1;
  return source;
}

bool is_op_node(const CompiledNode& node, const char* target) {
  return node.kind == NodeKind::op && node.target == target;
}

// gelu(linear(x, w, b)) with the linear's output read by the gelu alone: the fused node.
std::optional<CompiledNode> fuse_linear_gelu(const CompiledNode& linear, const CompiledNode& gelu) {
  const CompiledArg& approximate = gelu.args[1];
  if (approximate.source != ArgSource::constant || !approximate.constant.isString()) return std::nullopt;
  const std::string form = approximate.constant.toStringRef();
  if ((form != "none" && form != "tanh") || linear.args[0].source != ArgSource::value ||
      linear.args[1].source != ArgSource::value)
    return std::nullopt;
  CompiledNode f;
  f.name = linear.name + "+" + gelu.name;
  f.target = "fused::linear_gelu";
  f.kind = NodeKind::fused;
  f.fusion = Fusion::linear_gelu;
  f.module = gelu.module;
  f.args = {linear.args[0], linear.args[1], linear.args[2], approximate};
  f.outputs = {gelu.outputs[0]};
  f.list_outputs = {{}};
  f.unfused = {linear, gelu};
  return f;
}

// layer_norm(add(x, a)) over the last dimension, with a weight: the fused node (both outputs).
std::optional<CompiledNode> fuse_add_layer_norm(const CompiledNode& add, const CompiledNode& norm) {
  const auto& shape = norm.args[1];  // (input, normalized_shape, weight, bias, eps, cudnn_enable)
  const bool last_dimension =
      shape.source == ArgSource::constant && shape.constant.isIntList() && shape.constant.toIntList().size() == 1;
  const bool unit_alpha = add.args[2].source == ArgSource::constant && add.args[2].constant.isScalar() &&
                          add.args[2].constant.toScalar().equal(1);
  const bool two_tensors = add.args[0].source == ArgSource::value && add.args[1].source == ArgSource::value;
  if (!last_dimension || !unit_alpha || !two_tensors || norm.args[2].source != ArgSource::value ||
      norm.args[4].source != ArgSource::constant)
    return std::nullopt;
  CompiledNode f;
  f.name = add.name + "+" + norm.name;
  f.target = "fused::add_layer_norm";
  f.kind = NodeKind::fused;
  f.fusion = Fusion::add_layer_norm;
  f.module = add.module;
  f.args = {add.args[0], add.args[1], norm.args[2], norm.args[3], norm.args[4]};
  f.outputs = {add.outputs[0], norm.outputs[0]};
  f.list_outputs = {{}, {}};
  f.unfused = {add, norm};
  return f;
}

}  // namespace

const GraphPassCounts& GraphProgram::optimize(const Program& program) {
  GraphPassCounts counts;
  counts.nodes_before = nodes_.size();
  std::set<int> results;
  for (const GraphOutput& out : program.outputs)
    if (const int s = slot_of(out.value); s >= 0) results.insert(s);
  // 1. Nodes that give back their input: their readers read the input instead.
  SlotFacts facts = slot_facts(nodes_, slot_count_, slots_, program);
  std::vector<int> renamed(slot_count_);
  for (int s = 0; s < slot_count_; ++s) renamed[s] = s;
  // Renamed in place, so that a later node's look at its size producers sees them renamed too.
  std::vector<CompiledNode> kept;
  for (CompiledNode& node : nodes_) {
    for_each_read(node, [&](int& s) { s = renamed[s]; });
    const int source = passed_through(node, facts, nodes_);
    if (source >= 0 && !results.count(node.outputs[0])) {
      renamed[node.outputs[0]] = source;
      ++counts.dropped;
      continue;
    }
    kept.push_back(node);
  }
  nodes_ = std::move(kept);
  // 2. Fusions, each into the first node's place: the second node's other inputs must be defined
  // before it, and the first node's output must be read where the fusion allows.
  facts = slot_facts(nodes_, slot_count_, slots_, program);
  std::vector<bool> removed(nodes_.size(), false);
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    CompiledNode& second = nodes_[n];
    const bool gelu = is_op_node(second, "aten::gelu"), norm = is_op_node(second, "aten::layer_norm");
    if ((!gelu && !norm) || second.args[0].source != ArgSource::value) continue;
    const int between = second.args[0].slot, p = facts.producer[between];
    if (p < 0 || removed[p] || nodes_[p].module != second.module || results.count(between)) continue;
    std::optional<CompiledNode> fused;
    if (gelu && is_op_node(nodes_[p], "aten::linear") && facts.readers[between] == 1) {
      fused = fuse_linear_gelu(nodes_[p], second);
    } else if (norm && is_op_node(nodes_[p], "aten::add.Tensor")) {
      bool defined_before = true;
      for_each_read(second,
                    [&](int& s) { defined_before = defined_before && (s == between || facts.producer[s] < p); });
      if (defined_before) fused = fuse_add_layer_norm(nodes_[p], second);
    }
    if (!fused) continue;
    ++(gelu ? counts.linear_gelu : counts.add_layer_norm);
    nodes_[p] = std::move(*fused);
    removed[n] = true;
  }
  kept.clear();
  for (std::size_t n = 0; n < nodes_.size(); ++n)
    if (!removed[n]) kept.push_back(std::move(nodes_[n]));
  nodes_ = std::move(kept);
  counts.nodes_after = nodes_.size();
  pass_counts_ = counts;
  return pass_counts_;
}

bool run_fused_node(const CompiledNode& node, std::vector<c10::IValue>& values) {
  const auto tensor = [&](std::size_t i) {
    const CompiledArg& a = node.args[i];
    return a.source == ArgSource::value ? values[a.slot].toTensor() : at::Tensor();
  };
  const auto all_apply = [](std::initializer_list<at::Tensor> ts) {
    for (const at::Tensor& t : ts)
      if (t.defined() && !fused::applies(t)) return false;
    return true;
  };
  if (at::autocast::is_autocast_enabled(at::kCPU)) return false;
  if (node.fusion == Fusion::linear_gelu) {
    const at::Tensor x = tensor(0), w = tensor(1), b = tensor(2);
    if (!all_apply({x, w, b}) || x.dim() < 1) return false;
    const auto form = node.args[3].constant.toStringRef() == "tanh" ? fused::GeluForm::tanh : fused::GeluForm::exact;
    values[node.outputs[0]] = fused::bias_gelu(at::matmul(x, w.t()), b, form);
    return true;
  }
  const at::Tensor x = tensor(0), a = tensor(1), w = tensor(2), b = tensor(3);
  if (!all_apply({x, a, w, b}) || x.sizes() != a.sizes() || x.dim() < 1 || w.dim() != 1 || w.size(0) != x.size(-1) ||
      (b.defined() && b.sizes() != w.sizes()))
    return false;
  auto [sum, normed] = fused::add_layer_norm(x, a, w, b, node.args[4].constant.toDouble());
  values[node.outputs[0]] = std::move(sum);
  values[node.outputs[1]] = std::move(normed);
  return true;
}

}  // namespace plugtrain::exported
