// What a compiled graph may do, checked as each node is compiled: read only values defined
// before it, give the interpreter's size nodes what they take, and fix no size that would make
// a small archive allocate gigabytes (graph_compile.cpp calls these; the limits are program.h's).
#include "graph_program.h"

namespace plugtrain::exported {

namespace {

// Whether `argument` sizes a tensor the operator makes: a factory's size (an operator that takes
// no tensor: zeros, full, empty_strided...), new_zeros' and its kind's, and repeat's. A view's
// size makes nothing.
bool allocates(const c10::FunctionSchema& schema, const c10::Argument& argument) {
  if (argument.name() == "repeats") return true;
  if (argument.name() != "size") return false;
  if (schema.name().rfind("aten::new_", 0) == 0) return true;
  for (const c10::Argument& a : schema.arguments())
    if (a.type()->kind() == c10::TypeKind::TensorType) return false;
  return true;
}

}  // namespace

// Slots are made only where a value is defined (the graph's inputs, a node's outputs), so a
// node reading anything else reads a value no earlier node defined: refused, not run.
int GraphProgram::use(const std::string& value, const CompiledNode& node) const {
  const auto it = slots_.find(value);
  if (it == slots_.end()) fail(node, "reads " + value + ", which no graph input or earlier node defines");
  return it->second;
}

// What the interpreter's size nodes take (graph_run.cpp): the argument count and kinds, and no
// division by a constant zero.
void GraphProgram::check_size_node(const CompiledNode& node) const {
  const std::size_t wanted =
      node.kind == NodeKind::sym_numel || (node.kind == NodeKind::int_arith && node.target == "_operator.neg") ? 1 : 2;
  if (node.args.size() != wanted)
    fail(node, "takes " + std::to_string(wanted) + " arguments, the graph gives " + std::to_string(node.args.size()));
  const bool of_tensor = node.kind != NodeKind::int_arith;
  if (of_tensor && node.args[0].source != ArgSource::value) fail(node, "its first argument is not a tensor");
  for (std::size_t i = of_tensor ? 1 : 0; i < node.args.size(); ++i) {
    const CompiledArg& a = node.args[i];
    if (a.source != ArgSource::value && !(a.source == ArgSource::constant && a.constant.isInt()))
      fail(node, "argument " + std::to_string(i) + " is not an integer");
  }
  const bool divides = node.target == "_operator.floordiv" || node.target == "_operator.mod";
  if (divides && node.args[1].source == ArgSource::constant && node.args[1].constant.toInt() == 0)
    fail(node, "divides by zero");
}

// A size fixed in the graph (zeros([n, n]), x.repeat(...)) makes that many elements when the
// node runs: bounded, so that a small archive cannot make the process allocate gigabytes.
void GraphProgram::check_constant_size(const c10::FunctionSchema& schema, const c10::Argument& argument,
                                       const CompiledArg& arg, const CompiledNode& node) const {
  if (!allocates(schema, argument) || !arg.constant.isIntList()) return;
  std::int64_t elements = 1;
  for (const std::int64_t n : arg.constant.toIntList())
    if (n < 0 || __builtin_mul_overflow(elements, n, &elements) || elements > kMaxConstantElements)
      fail(node, "argument " + argument.name() + " asks for more than " + std::to_string(kMaxConstantElements) +
                     " elements (the limit of a size fixed in the graph)");
}

}  // namespace plugtrain::exported
