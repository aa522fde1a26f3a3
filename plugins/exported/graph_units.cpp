#include "graph_units.h"

#include <map>

namespace plugtrain::exported {

namespace {

std::vector<int> slots_read(const CompiledNode& node) {
  std::vector<int> read;
  for (const CompiledArg& a : node.args) {
    if (a.slot >= 0) read.push_back(a.slot);
    for (int s : a.slots)
      if (s >= 0) read.push_back(s);
  }
  return read;
}

std::vector<int> slots_written(const CompiledNode& node) {
  std::vector<int> written;
  for (int s : node.outputs)
    if (s >= 0) written.push_back(s);
  for (const auto& list : node.list_outputs) written.insert(written.end(), list.begin(), list.end());
  return written;
}

struct Uses {
  std::map<int, std::size_t> producer;              // slot -> the node writing it
  std::map<int, std::vector<std::size_t>> readers;  // slot -> the nodes reading it
};

Uses uses_of(const std::vector<CompiledNode>& nodes) {
  Uses u;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (int s : slots_written(nodes[i])) u.producer[s] = i;
    for (int s : slots_read(nodes[i])) u.readers[s].push_back(i);
  }
  return u;
}

// The call [begin, end) as a unit, or a unit with no module when it cannot be one.
GraphUnit try_unit(const std::vector<CompiledNode>& nodes, const Uses& uses, std::size_t begin, std::size_t end,
                   const std::set<int>& weight_slots, const std::set<int>& result_slots) {
  GraphUnit unit{nodes[begin].module, begin, end};
  auto inside = [&](std::size_t i) { return i >= begin && i < end; };
  std::set<int> inputs, outputs, reads;
  for (std::size_t i = begin; i < end; ++i) {
    for (int s : slots_read(nodes[i])) {
      const auto made = uses.producer.find(s);
      if (made != uses.producer.end() && inside(made->second)) continue;
      const bool tensor = made != uses.producer.end()
                              ? nodes[made->second].kind == NodeKind::op || nodes[made->second].kind == NodeKind::fused
                              : !weight_slots.count(s);
      if (weight_slots.count(s)) unit.weights.insert(s);
      (tensor && !weight_slots.count(s) ? inputs : reads).insert(s);
    }
    for (int s : slots_written(nodes[i])) {
      bool used_after = result_slots.count(s) > 0;
      if (const auto r = uses.readers.find(s); r != uses.readers.end())
        for (std::size_t reader : r->second) used_after = used_after || reader >= end;
      if (used_after) outputs.insert(s);
    }
  }
  // Its weights are its own: a weight another node reads too (a tied embedding) stays the root's.
  for (int w : unit.weights)
    for (std::size_t reader : uses.readers.at(w))
      if (!inside(reader)) unit.module.clear();
  if (inputs.size() != 1 || outputs.size() != 1 || unit.weights.empty() || nodes[begin].module.empty()) {
    unit.module.clear();
    return unit;
  }
  for (std::size_t i = begin; i < end; ++i)
    if (nodes[i].training_only || nodes[i].target.find("_functional") != std::string::npos) unit.module.clear();
  unit.input = *inputs.begin();
  unit.output = *outputs.begin();
  if (result_slots.count(unit.output) && result_slots.size() > 1) unit.module.clear();  // a buffer's new value
  unit.reads.assign(reads.begin(), reads.end());
  return unit;
}

}  // namespace

std::vector<GraphUnit> find_graph_units(const GraphProgram& graph, const std::set<int>& weight_slots,
                                        const std::set<int>& result_slots) {
  const std::vector<CompiledNode>& nodes = graph.nodes();
  const Uses uses = uses_of(nodes);
  // A module whose nodes come in two runs (called twice, or interleaved) is no unit.
  std::map<std::string, int> runs;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (i == 0 || nodes[i].module != nodes[i - 1].module) ++runs[nodes[i].module];
  std::vector<GraphUnit> units;
  for (std::size_t begin = 0; begin < nodes.size();) {
    std::size_t end = begin + 1;
    while (end < nodes.size() && nodes[end].module == nodes[begin].module) ++end;
    GraphUnit unit = try_unit(nodes, uses, begin, end, weight_slots, result_slots);
    if (!unit.module.empty() && runs[unit.module] == 1) units.push_back(std::move(unit));
    begin = end;
  }
  return units;
}

}  // namespace plugtrain::exported
