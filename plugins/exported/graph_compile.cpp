// GraphProgram's compilation: from the serialised nodes to operators and argument sources.
#include <ATen/ops/scalar_tensor.h>
#include <c10/core/Layout.h>
#include <c10/core/MemoryFormat.h>

#include "graph_program.h"

namespace plugtrain::exported {

namespace {

using nlohmann::json;

// "torch.ops.aten.add_.Tensor" -> {"aten::add_", "Tensor"}; "default" is the unnamed overload.
std::optional<c10::OperatorName> operator_name(const std::string& target) {
  const std::string prefix = "torch.ops.";
  if (target.rfind(prefix, 0) != 0) return std::nullopt;
  const std::string rest = target.substr(prefix.size());
  const auto first = rest.find('.'), last = rest.rfind('.');
  if (first == std::string::npos || first == last) return std::nullopt;
  std::string overload = rest.substr(last + 1);
  if (overload == "default") overload.clear();
  return c10::OperatorName(rest.substr(0, first) + "::" + rest.substr(first + 1, last - first - 1), overload);
}

bool is_type(const c10::Argument* schema, c10::TypeKind kind) {
  if (!schema) return false;
  c10::TypePtr type = schema->type();
  if (auto optional = type->cast<c10::OptionalType>()) type = optional->getElementType();
  return type->kind() == kind;
}

c10::IValue memory_format_of(std::int64_t code) {
  switch (code) {
    case 1: return static_cast<std::int64_t>(c10::MemoryFormat::Contiguous);
    case 2: return static_cast<std::int64_t>(c10::MemoryFormat::ChannelsLast);
    case 3: return static_cast<std::int64_t>(c10::MemoryFormat::ChannelsLast3d);
    case 4: return static_cast<std::int64_t>(c10::MemoryFormat::Preserve);
    default: return c10::IValue();
  }
}

// A number where the schema wants a tensor (add_(num_batches_tracked, 1)): a 0-d tensor marked
// as a wrapped number, as Python's argument parser makes one, so type promotion treats it as a
// scalar and it may meet tensors on any device.
at::Tensor wrapped_number(const c10::Scalar& value) {
  at::Tensor t = at::scalar_tensor(value, value.isIntegral(false) ? at::kLong : at::kDouble);
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

// The top-level submodule a node runs in, from its nn_module_stack ("key,path,type;..." from
// the root inward): the second entry's path; "" for the root's own nodes.
std::string top_module(const json& node) {
  if (!node.contains("metadata") || !node.at("metadata").is_object()) return "";
  const json& metadata = node.at("metadata");
  if (!metadata.contains("nn_module_stack") || !metadata.at("nn_module_stack").is_string()) return "";
  const std::string stack = metadata.at("nn_module_stack").get<std::string>();
  const auto first_end = stack.find(';');
  if (first_end == std::string::npos) return "";
  const std::string second = stack.substr(first_end + 1, stack.find(';', first_end + 1) - first_end - 1);
  const auto comma = second.find(',');
  if (comma == std::string::npos) return "";
  return second.substr(comma + 1, second.find(',', comma + 1) - comma - 1);
}

const std::set<std::string> kIntArithmetic = {"_operator.add",      "_operator.sub", "_operator.mul",
                                              "_operator.floordiv", "_operator.mod", "_operator.neg"};

}  // namespace

GraphProgram::GraphProgram(const Program& program) : file_(program.file.string()) {
  std::set<std::string> train_only_buffers;
  for (const GraphInput& in : program.inputs) {
    slot(in.value);
    const std::string suffix = "num_batches_tracked";
    if (in.kind == InputKind::buffer && in.target.size() >= suffix.size() &&
        in.target.compare(in.target.size() - suffix.size(), suffix.size(), suffix) == 0)
      train_only_buffers.insert(in.value);
  }
  for (const json& node : program.nodes) {
    try {
      nodes_.push_back(compile(node, train_only_buffers));
    } catch (const json::exception& e) {
      throw ProgramError(file_ + ": node " + std::to_string(nodes_.size()) +
                         " does not follow torch.export's schema: " + e.what());
    } catch (const SchemaError& e) {
      throw ProgramError(file_ + ": node " + std::to_string(nodes_.size()) +
                         " does not follow torch.export's schema: " + e.what());
    } catch (const c10::Error& e) {
      throw ProgramError(file_ + ": node " + std::to_string(nodes_.size()) + ": " + e.what_without_backtrace());
    }
  }
  for (const GraphOutput& out : program.outputs)
    if (!out.value.empty() && !slots_.count(out.value))
      throw ProgramError(file_ + ": output " + out.value + " is produced by no node");
}

int GraphProgram::slot(const std::string& value) {
  const auto [it, added] = slots_.emplace(value, slot_count_);
  if (added) ++slot_count_;
  return it->second;
}

int GraphProgram::slot_of(const std::string& value) const {
  const auto it = slots_.find(value);
  return it == slots_.end() ? -1 : it->second;
}

void GraphProgram::fail(const CompiledNode& node, const std::string& why) const {
  throw ProgramError(file_ + ": node " + node.name + " (" + node.target + "): " + why);
}

CompiledNode GraphProgram::compile(const json& node, const std::set<std::string>& train_only_buffers) {
  CompiledNode c;
  c.target = node.at("target").get<std::string>();
  c.name = node.contains("name") && node.at("name").is_string() ? node.at("name").get<std::string>() : c.target;
  c.module = top_module(node);
  const json& inputs = node.at("inputs");
  if (kIntArithmetic.count(c.target) || c.target == "torch.ops.aten.sym_size.int" ||
      c.target == "torch.ops.aten.sym_numel.default") {
    c.kind = kIntArithmetic.count(c.target)                   ? NodeKind::int_arith
             : c.target == "torch.ops.aten.sym_numel.default" ? NodeKind::sym_numel
                                                              : NodeKind::sym_size;
    for (const json& in : inputs) c.args.push_back(compile_arg(in.at("arg"), nullptr, c));
    check_size_node(c);
    compile_outputs(node.at("outputs"), c);
    return c;
  }
  const auto name = operator_name(c.target);
  if (!name)
    fail(c, "not an operator plugtrain can run (higher-order operators and Python functions are not supported)");
  c.target = name->name + (name->overload_name.empty() ? "" : "." + name->overload_name);
  // A graph from anywhere is a program: it may run ATen's tensor operators, not the others a
  // process has registered, and not the one that maps files (from_file, shared: it writes them).
  if (name->name.rfind("aten::", 0) != 0 || name->name == "aten::from_file")
    fail(c, "not an operator a model's graph may run (ATen's tensor operators only; files are never read or written)");
  c.op = c10::Dispatcher::singleton().findSchema(*name);
  if (!c.op) fail(c, "unknown operator: this LibTorch has no such operator");
  const c10::FunctionSchema& schema = c.op->schema();
  std::map<std::string, const json*> given;
  for (const json& in : inputs) given[in.at("name").get<std::string>()] = &in.at("arg");
  // BatchNorm's step counter: eager PyTorch adds 1 only in train(); the exported graph always does.
  if ((c.target == "aten::add_.Tensor" || c.target == "aten::add_.Scalar") && given.count("self")) {
    const json& self = *given.at("self");
    c.training_only = self.contains("as_tensor") && train_only_buffers.count(self.at("as_tensor").at("name"));
  }
  for (const c10::Argument& argument : schema.arguments()) {
    const auto it = given.find(argument.name());
    if (it == given.end()) {
      if (!argument.default_value()) fail(c, "argument " + argument.name() + " has no value");
      c.args.push_back({ArgSource::constant, *argument.default_value()});
      continue;
    }
    c.args.push_back(compile_arg(*it->second, &argument, c));
    check_constant_size(schema, argument, c.args.back(), c);
    given.erase(it);
  }
  if (!given.empty()) fail(c, "argument " + given.begin()->first + " is not in the operator's schema");
  compile_outputs(node.at("outputs"), c);
  // torch.export leaves out a .contiguous() that did nothing where it traced (attention's CPU
  // output is laid out (B, T, H, D) already, so y.transpose(1, 2).contiguous().view(...) is traced
  // as a view); on a device whose kernel lays it out otherwise that view would fail. reshape
  // (the same arguments) is the view wherever the view works, and the copy .contiguous() makes
  // where it does not.
  if (c.target == "aten::view") c.op = c10::Dispatcher::singleton().findSchema({"aten::reshape", ""});
  return c;
}

CompiledArg GraphProgram::compile_arg(const json& arg, const c10::Argument* schema, const CompiledNode& node) const {
  if (!arg.is_object() || arg.empty()) fail(node, "an argument that is not torch.export's Argument: " + brief(arg));
  const auto [kind, v_ptr] = union_entry(arg);
  const nlohmann::json& v = *v_ptr;
  const std::string name = schema ? schema->name() : "";
  CompiledArg a;
  auto symbolic = [&](const json& sym, const char* fixed_key) {
    if (sym.contains("as_name"))
      return CompiledArg{ArgSource::value, {}, use(sym.at("as_name").get<std::string>(), node)};
    const json& fixed = sym.at(fixed_key);
    return CompiledArg{ArgSource::constant, fixed.is_boolean()          ? c10::IValue(fixed.get<bool>())
                                            : fixed.is_number_integer() ? c10::IValue(integer_of(fixed))
                                                                        : c10::IValue(fixed.get<double>())};
  };
  if (kind == "as_none") return a;
  if (kind == "as_tensor") return {ArgSource::value, {}, use(v.at("name").get<std::string>(), node)};
  if (kind == "as_optional_tensor")
    return v.contains("as_tensor")
               ? CompiledArg{ArgSource::value, {}, use(v.at("as_tensor").at("name").get<std::string>(), node)}
               : a;
  if (kind == "as_tensors" || kind == "as_optional_tensors") {
    a.source = kind == "as_tensors" ? ArgSource::tensor_list : ArgSource::optional_tensor_list;
    for (const json& t : v) {
      const json* tensor = kind == "as_tensors" ? &t : t.contains("as_tensor") ? &t.at("as_tensor") : nullptr;
      a.slots.push_back(tensor ? use(tensor->at("name").get<std::string>(), node) : -1);
    }
    return a;
  }
  if (kind == "as_int") {
    if (is_type(schema, c10::TypeKind::TensorType)) return {ArgSource::constant, wrapped_number(integer_of(v))};
    if (is_type(schema, c10::TypeKind::FloatType)) return {ArgSource::constant, v.get<double>()};
    return {ArgSource::constant, integer_of(v)};
  }
  if (kind == "as_float") {
    if (name == "dropout_p") return {ArgSource::dropout_p, v.get<double>()};
    if (is_type(schema, c10::TypeKind::TensorType)) return {ArgSource::constant, wrapped_number(v.get<double>())};
    return {ArgSource::constant, v.get<double>()};
  }
  if (kind == "as_bool") {
    if (name == "training" || name == "train") return {ArgSource::training};
    return {ArgSource::constant, v.get<bool>()};
  }
  if (kind == "as_ints") return {ArgSource::constant, c10::List<std::int64_t>(integers_of(v))};
  if (kind == "as_floats") return {ArgSource::constant, c10::List<double>(v.get<std::vector<double>>())};
  if (kind == "as_bools") {
    c10::List<bool> bools;
    for (const json& b : v) bools.push_back(b.get<bool>());
    return {ArgSource::constant, std::move(bools)};
  }
  if (kind == "as_string") return {ArgSource::constant, v.get<std::string>()};
  if (kind == "as_strings") return {ArgSource::constant, c10::List<std::string>(v.get<std::vector<std::string>>())};
  if (kind == "as_sym_int") return symbolic(v, "as_int");
  if (kind == "as_sym_float") return symbolic(v, "as_float");
  if (kind == "as_sym_bool") return symbolic(v, "as_bool");
  if (kind == "as_sym_ints") {
    a.source = ArgSource::int_list;
    for (const json& s : v) {
      a.slots.push_back(s.contains("as_name") ? use(s.at("as_name").get<std::string>(), node) : -1);
      if (!s.contains("as_name") && !s.contains("as_int"))
        fail(node, "argument " + name + " holds a size that is neither a value nor an integer: " + brief(s));
      a.ints.push_back(s.contains("as_int") ? integer_of(s.at("as_int")) : 0);
    }
    return a;
  }
  if (kind == "as_scalar_type") {
    const auto type = scalar_type_of(integer_of(v));
    if (!type) fail(node, "argument " + name + " names dtype code " + brief(v) + ", which plugtrain does not know");
    return {ArgSource::constant, static_cast<std::int64_t>(*type)};
  }
  if (kind == "as_memory_format") {
    c10::IValue format = memory_format_of(integer_of(v));
    if (format.isNone()) fail(node, "argument " + name + " names memory format code " + brief(v));
    return {ArgSource::constant, format};
  }
  if (kind == "as_layout") {
    if (integer_of(v) != 7) fail(node, "argument " + name + ": only strided tensors are supported");
    return {ArgSource::constant, static_cast<std::int64_t>(c10::kStrided)};
  }
  if (kind == "as_device") return {ArgSource::device};
  if (kind == "as_complex")
    return {ArgSource::constant, c10::complex<double>(v.at("real").get<double>(), v.at("imag").get<double>())};
  fail(node, "argument " + (name.empty() ? std::string("of kind ") : name + " of kind ") + kind +
                 " is not supported (higher-order operators, custom objects and nested lists are not)");
}

void GraphProgram::compile_outputs(const json& outputs, CompiledNode& node) {
  for (const json& out : outputs) {
    const auto [kind, v_ptr] = union_entry(out);
    const nlohmann::json& v = *v_ptr;
    node.list_outputs.emplace_back();
    if (kind == "as_tensor") {
      node.outputs.push_back(slot(v.at("name").get<std::string>()));
    } else if (kind == "as_tensors") {
      node.outputs.push_back(-1);
      for (const json& t : v) node.list_outputs.back().push_back(slot(t.at("name").get<std::string>()));
    } else if ((kind == "as_sym_int" || kind == "as_sym_float" || kind == "as_sym_bool") && v.contains("as_name")) {
      node.outputs.push_back(slot(v.at("as_name").get<std::string>()));
    } else if (kind == "as_none" || kind == "as_int" || kind == "as_float" || kind == "as_bool") {
      node.outputs.push_back(-1);
    } else {
      fail(node, "an output of kind " + kind + " is not supported");
    }
  }
  if (node.op && node.outputs.size() > node.op->schema().returns().size())
    fail(node, "more outputs than the operator's schema returns");
}

}  // namespace plugtrain::exported
