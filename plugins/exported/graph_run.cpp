// GraphProgram's interpreter: one boxed dispatcher call per node, the same kernels (and
// autograd formulas) eager PyTorch calls.
#include <c10/core/Layout.h>

#include <limits>
#include <stdexcept>

#include "graph_fusion.h"
#include "graph_program.h"

namespace plugtrain::exported {

namespace {

void push_argument(const CompiledArg& a, const std::vector<c10::IValue>& values, bool training,
                   const c10::Device& device, torch::jit::Stack& stack) {
  switch (a.source) {
    case ArgSource::constant: stack.push_back(a.constant); return;
    case ArgSource::value: stack.push_back(values[a.slot]); return;
    case ArgSource::device: stack.emplace_back(device); return;
    case ArgSource::training: stack.emplace_back(training); return;
    case ArgSource::dropout_p: stack.emplace_back(training ? a.constant.toDouble() : 0.0); return;
    case ArgSource::tensor_list: {
      c10::List<at::Tensor> list;
      list.reserve(a.slots.size());
      for (int s : a.slots) list.push_back(values[s].toTensor());
      stack.emplace_back(std::move(list));
      return;
    }
    case ArgSource::optional_tensor_list: {
      c10::List<std::optional<at::Tensor>> list;
      list.reserve(a.slots.size());
      for (int s : a.slots) list.push_back(s < 0 ? std::nullopt : std::optional<at::Tensor>(values[s].toTensor()));
      stack.emplace_back(std::move(list));
      return;
    }
    case ArgSource::int_list: {
      c10::List<std::int64_t> list;
      list.reserve(a.slots.size());
      for (size_t i = 0; i < a.slots.size(); ++i)
        list.push_back(a.slots[i] < 0 ? a.ints[i] : values[a.slots[i]].toInt());
      stack.emplace_back(std::move(list));
      return;
    }
  }
}

std::int64_t int_of(const CompiledArg& a, const std::vector<c10::IValue>& values) {
  return a.source == ArgSource::value ? values[a.slot].toInt() : a.constant.toInt();
}

// Python's integer operators on sizes (floor division and modulo round toward minus infinity).
// A hostile graph reaches here with any operands: a zero divisor or INT64_MIN / -1 would raise
// SIGFPE and kill the host, and an overflow is undefined, so each is an exception instead.
std::int64_t arithmetic(const std::string& op, std::int64_t x, std::int64_t y) {
  std::int64_t out = 0;
  bool overflow = false;
  if (op == "_operator.add") {
    overflow = __builtin_add_overflow(x, y, &out);
  } else if (op == "_operator.sub") {
    overflow = __builtin_sub_overflow(x, y, &out);
  } else if (op == "_operator.mul") {
    overflow = __builtin_mul_overflow(x, y, &out);
  } else if (op == "_operator.neg") {
    overflow = __builtin_sub_overflow(std::int64_t{0}, x, &out);
  } else {
    if (y == 0) throw std::domain_error("divides " + std::to_string(x) + " by zero");
    if (x == std::numeric_limits<std::int64_t>::min() && y == -1) throw std::overflow_error("overflows 64 bits");
    const std::int64_t q = x / y, r = x % y;
    const bool adjust = r != 0 && ((r < 0) != (y < 0));
    out = op == "_operator.floordiv" ? (adjust ? q - 1 : q) : (adjust ? r + y : r);  // or _operator.mod
  }
  if (overflow) throw std::overflow_error("overflows 64 bits");
  return out;
}

void run_size_node(const CompiledNode& node, std::vector<c10::IValue>& values) {
  if (node.outputs.empty() || node.outputs[0] < 0) return;
  c10::IValue& out = values[node.outputs[0]];
  if (node.kind == NodeKind::sym_size) {
    out = values[node.args[0].slot].toTensor().size(int_of(node.args[1], values));
  } else if (node.kind == NodeKind::sym_numel) {
    out = values[node.args[0].slot].toTensor().numel();
  } else {
    const std::int64_t x = int_of(node.args[0], values);
    out = arithmetic(node.target, x, node.args.size() > 1 ? int_of(node.args[1], values) : 0);
  }
}

void run_op_node(const CompiledNode& node, std::vector<c10::IValue>& values, bool training, const c10::Device& device,
                 torch::jit::Stack& stack) {
  stack.clear();
  stack.reserve(node.args.size());
  for (const CompiledArg& a : node.args) push_argument(a, values, training, device, stack);
  node.op->callBoxed(stack);
  for (size_t i = 0; i < node.outputs.size() && i < stack.size(); ++i) {
    if (node.outputs[i] >= 0) {
      values[node.outputs[i]] = std::move(stack[i]);
    } else if (!node.list_outputs[i].empty()) {
      const c10::List<at::Tensor> list = stack[i].toTensorList();
      for (size_t k = 0; k < node.list_outputs[i].size() && k < list.size(); ++k)
        values[node.list_outputs[i][k]] = list.get(k);
    }
  }
}

}  // namespace

void GraphProgram::run_nodes(std::vector<c10::IValue>& values, std::size_t begin, std::size_t end, bool training,
                             const c10::Device& device) const {
  torch::jit::Stack stack;
  for (std::size_t n = begin; n < end && n < nodes_.size(); ++n) {
    const CompiledNode& node = nodes_[n];
    if (node.training_only && !training) continue;
    if (node.kind != NodeKind::op && node.kind != NodeKind::fused) {
      // Said in one line naming the node (an operator's own errors pass through untouched: the
      // host tells an out-of-memory error by its type).
      try {
        run_size_node(node, values);
      } catch (const c10::Error& e) { fail(node, e.what_without_backtrace()); } catch (const std::exception& e) {
        fail(node, e.what());
      }
      continue;
    }
    // An operator's complaint names the file and the node; running out of memory passes as it
    // is, since the host tells it by its type (a smaller batch, a clear message). A fused node
    // runs the nodes it replaced where its kernels do not apply (graph_fusion.h).
    try {
      if (node.kind == NodeKind::op) {
        run_op_node(node, values, training, device, stack);
      } else if (!run_fused_node(node, values)) {
        for (const CompiledNode& part : node.unfused) run_op_node(part, values, training, device, stack);
      }
    } catch (const c10::OutOfMemoryError&) { throw; } catch (const c10::Error& e) {
      const std::string why = e.what_without_backtrace();
      fail(node, why.substr(0, why.find('\n')));
    }
  }
}

void GraphProgram::check_kernels(const c10::Device& device) const {
  const c10::DispatchKey backend = c10::computeDispatchKey(std::nullopt, c10::kStrided, device);
  auto& dispatcher = c10::Dispatcher::singleton();
  if (dispatcher.hasBackendFallbackForDispatchKey(backend)) return;  // the device runs every operator
  // The computed table holds a backend's own kernel or a composite one (that decomposes).
  for (const CompiledNode& node : nodes_) {
    const auto lacks = [&](const CompiledNode& n) { return n.op && !n.op->hasComputedKernelForDispatchKey(backend); };
    if (lacks(node)) fail(node, "no kernel on " + device.str() + " (" + c10::toString(backend) + ")");
    for (const CompiledNode& part : node.unfused)  // a fused node's, which it runs off the CPU
      if (lacks(part)) fail(part, "no kernel on " + device.str() + " (" + c10::toString(backend) + ")");
  }
}

}  // namespace plugtrain::exported
