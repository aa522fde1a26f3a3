#include "exported_model.h"

#include <map>
#include <mutex>
#include <sstream>

#include <torch/nn/module.h>
#include <torch/utils.h>

namespace plugtrain::exported {

namespace {

// A module that only holds parameters, buffers and children: the Python module's hierarchy.
class Holder final : public torch::nn::Module {
 public:
  Holder() : torch::nn::Module("Module") {}
  using torch::nn::Module::register_buffer;
  using torch::nn::Module::register_module;
  using torch::nn::Module::register_parameter;
};

std::string shape_text(const std::vector<std::optional<std::int64_t>>& sizes, size_t from) {
  std::ostringstream out;
  out << "(";
  for (size_t d = from; d < sizes.size(); ++d) {
    if (d > from) out << ", ";
    if (sizes[d]) out << *sizes[d]; else out << "any";
  }
  out << ")";
  return out.str();
}

std::string shape_text(const std::vector<std::int64_t>& sizes) {
  std::vector<std::optional<std::int64_t>> o(sizes.begin(), sizes.end());
  return shape_text(o, 0);
}

}  // namespace

std::shared_ptr<const LoadedProgram> load_program(const std::filesystem::path& file) {
  static std::mutex mutex;
  static std::map<std::string, std::pair<std::filesystem::file_time_type, std::shared_ptr<const LoadedProgram>>> read;
  std::error_code ignored;
  const std::string key = std::filesystem::weakly_canonical(file, ignored).string();
  const auto written = std::filesystem::last_write_time(file, ignored);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = read.find(key);
  if (it == read.end() || it->second.first != written)
    it = read.insert_or_assign(key, std::make_pair(written, std::make_shared<const LoadedProgram>(read_program(file))))
             .first;
  return it->second.second;
}

ExportedModel::ExportedModel(std::shared_ptr<const LoadedProgram> loaded, const BatchDescription& batch,
                             const TargetDescription& target)
    : loaded_(std::move(loaded)) {
  const Program& p = loaded_->program;
  const GraphProgram& graph = loaded_->graph;
  for (const GraphInput& in : p.inputs) {
    const int slot = graph.slot_of(in.value);
    if (in.kind == InputKind::parameter || (in.kind == InputKind::buffer && in.persistent)) {
      register_weight(in.target, p.weights.at(in.target).clone(), in.kind == InputKind::parameter);
      weights_.emplace_back(slot, in.kind == InputKind::parameter ? named_parameters()[in.target]
                                                                  : named_buffers()[in.target]);
    } else if (in.kind == InputKind::buffer) {
      constants_.emplace_back(slot, p.weights.at(in.target).clone());
    } else if (in.kind == InputKind::tensor_constant) {
      constants_.emplace_back(slot, p.constants.at(in.target).clone());
    } else if (in.kind == InputKind::constant_input) {
      const nlohmann::json& v = in.constant;
      const auto [kind, value_ptr] = union_entry(v);
  const nlohmann::json& value = *value_ptr;
      constant_inputs_.emplace_back(slot, kind == "as_int"     ? c10::IValue(value.get<std::int64_t>())
                                          : kind == "as_float" ? c10::IValue(value.get<double>())
                                          : kind == "as_bool"  ? c10::IValue(value.get<bool>())
                                          : kind == "as_string" ? c10::IValue(value.get<std::string>())
                                                               : c10::IValue());
    }
  }
  for (const GraphOutput& out : p.outputs) {
    if (out.kind == OutputKind::user_output && output_slot_ < 0 && !out.value.empty())
      output_slot_ = graph.slot_of(out.value);
    if (out.kind == OutputKind::buffer_mutation)
      mutated_buffers_.emplace_back(graph.slot_of(out.value), named_buffers()[out.target]);
  }
  if (output_slot_ < 0) throw ProgramError(p.file.string() + ": the program returns no tensor");
  bind_inputs(batch);
  // The output's last dimension against what the task needs (classes, the blank, ...).
  for (const GraphOutput& out : p.outputs) {
    if (out.kind != OutputKind::user_output || !p.shapes.count(out.value)) continue;
    const auto& sizes = p.shapes.at(out.value).sizes;
    const std::int64_t needed = target.model_outputs();
    if (needed > 0 && !sizes.empty() && sizes.back() && *sizes.back() != needed)
      throw ProgramError(p.file.string() + ": the model's output has " + std::to_string(*sizes.back()) +
                         " values in its last dimension, the task needs " + std::to_string(needed) +
                         " (the data set's classes): export the model for " + std::to_string(needed) + " outputs");
    break;
  }
}

void ExportedModel::register_weight(const std::string& name, const at::Tensor& value, bool parameter) {
  // The root is this model, the rest Holders: each registers through its own protected members.
  torch::nn::Module* owner = this;
  std::string rest = name;
  for (auto dot = rest.find('.'); dot != std::string::npos; dot = rest.find('.')) {
    const std::string part = rest.substr(0, dot);
    rest = rest.substr(dot + 1);
    const auto children = owner->named_children();
    if (const auto* child = children.find(part)) {
      owner = child->get();
      continue;
    }
    auto holder = std::make_shared<Holder>();
    if (owner == this) register_module(part, holder); else static_cast<Holder*>(owner)->register_module(part, holder);
    owner = holder.get();
  }
  if (owner == this) {
    if (parameter) register_parameter(rest, value); else register_buffer(rest, value);
  } else if (parameter) {
    static_cast<Holder*>(owner)->register_parameter(rest, value);
  } else {
    static_cast<Holder*>(owner)->register_buffer(rest, value);
  }
}

void ExportedModel::bind_inputs(const BatchDescription& batch) {
  const Program& p = loaded_->program;
  for (const GraphInput& in : p.inputs) {
    if (in.kind != InputKind::user_input) continue;
    UserInput u{loaded_->graph.slot_of(in.value), in.value, "", p.shapes.count(in.value) ? &p.shapes.at(in.value) : nullptr};
    u.field = batch.has(in.value) ? in.value : user_inputs_.empty() ? "input" : "";
    if (u.field.empty() || !batch.has(u.field))
      throw ProgramError(p.file.string() + ": input " + in.value + " matches no field of the data set's batches");
    if (u.shape) {
      const std::vector<std::int64_t> sample = batch.shape(u.field);
      bool same = sample.size() + 1 == u.shape->sizes.size();
      for (size_t d = 0; same && d < sample.size(); ++d) same = !u.shape->sizes[d + 1] || *u.shape->sizes[d + 1] == sample[d];
      if (!same)
        throw ProgramError(p.file.string() + ": input " + in.value + " is " + shape_text(u.shape->sizes, 1) +
                           " per sample in the export, the data set gives " + shape_text(sample));
      if (batch.dtype(u.field) != u.shape->dtype)
        throw ProgramError(p.file.string() + ": input " + in.value + " is " + c10::toString(u.shape->dtype) +
                           " in the export, the data set gives " + c10::toString(batch.dtype(u.field)));
    }
    user_inputs_.push_back(u);
  }
}

void ExportedModel::check_batch(const UserInput& in, const at::Tensor& value) const {
  if (!in.shape) return;
  const auto& sizes = in.shape->sizes;
  if (!sizes.empty() && sizes[0] && value.dim() > 0 && *sizes[0] != value.size(0))
    throw ProgramError(loaded_->program.file.string() + ": input " + in.graph_name + " was exported with a fixed batch of " +
                       std::to_string(*sizes[0]) + " (dimension 0) and this batch has " +
                       std::to_string(value.size(0)) + ": export it with a dynamic batch, dynamic_shapes={0: "
                       "torch.export.Dim(\"batch\")} (python/export_model.py does)");
}

at::Tensor& ExportedModel::on_device(at::Tensor& constant, const c10::Device& device) {
  if (constant.device() != device) constant = constant.to(device);
  return constant;
}

TensorMap ExportedModel::forward_batch(const TensorMap& batch) {
  const GraphProgram& graph = loaded_->graph;
  std::vector<c10::IValue> values(graph.slot_count());
  c10::Device device = c10::kCPU;
  for (const UserInput& in : user_inputs_) {
    const at::Tensor& value = batch.at(in.field);
    check_batch(in, value);
    values[in.slot] = value;
    device = value.device();
  }
  if (!checked_device_ || *checked_device_ != device) {
    graph.check_kernels(device);
    checked_device_ = device;
  }
  for (const auto& [slot, tensor] : weights_) values[slot] = tensor;
  for (auto& [slot, tensor] : constants_) values[slot] = on_device(tensor, device);
  for (const auto& [slot, value] : constant_inputs_) values[slot] = value;
  graph.run(values, is_training(), device);
  if (!mutated_buffers_.empty()) {
    torch::NoGradGuard no_grad;
    for (auto& [slot, buffer] : mutated_buffers_) buffer.copy_(values[slot].toTensor());
  }
  return {{"output", values[output_slot_].toTensor()}};
}

}  // namespace plugtrain::exported
