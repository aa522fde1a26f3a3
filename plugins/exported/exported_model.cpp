#include "exported_model.h"

#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include <torch/nn/module.h>
#include <torch/utils.h>

#include "exported.h"

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
    if (sizes[d])
      out << *sizes[d];
    else
      out << "any";
  }
  out << ")";
  return out.str();
}

std::string shape_text(const std::vector<std::int64_t>& sizes) {
  std::vector<std::optional<std::int64_t>> o(sizes.begin(), sizes.end());
  return shape_text(o, 0);
}

// A constant input of the signature ({"as_int": 3}, ...) as the value the graph gets.
c10::IValue constant_value(const nlohmann::json& constant) {
  const auto [kind, value] = union_entry(constant);
  if (kind == "as_int") return integer_of(*value);
  if (kind == "as_float") return value->get<double>();
  if (kind == "as_bool") return value->get<bool>();
  if (kind == "as_string") return value->get<std::string>();
  return c10::IValue();
}

}  // namespace

std::shared_ptr<const LoadedProgram> load_program(const std::filesystem::path& file, bool graph_pass) {
  static std::mutex mutex;
  static std::map<std::string, std::pair<std::filesystem::file_time_type, std::shared_ptr<const LoadedProgram>>> read;
  std::error_code ignored;
  const std::string key =
      std::filesystem::weakly_canonical(file, ignored).string() + (graph_pass ? "" : "\n(as exported)");
  const auto written = std::filesystem::last_write_time(file, ignored);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = read.find(key);
  if (it == read.end() || it->second.first != written)
    it = read.insert_or_assign(
                 key, std::make_pair(written, std::make_shared<const LoadedProgram>(read_program(file), graph_pass)))
             .first;
  return it->second.second;
}

std::shared_ptr<Model> make_exported_model(const std::filesystem::path& file, const BatchDescription& batch,
                                           const TargetDescription& target, bool graph_pass) {
  if (file.empty())
    throw ProgramError(
        "model.file is not set: name the .pt2 file torch.export.save wrote (python/export_model.py "
        "writes one)");
  return std::make_shared<ExportedModel>(load_program(file, graph_pass), batch, target);
}

ExportedModel::ExportedModel(std::shared_ptr<const LoadedProgram> loaded, const BatchDescription& batch,
                             const TargetDescription& target)
    : loaded_(std::move(loaded)) {
  // What the archive holds meets LibTorch's module registry and the data here: their complaints
  // (a constant input of no known kind, a name a module cannot take) name the file too.
  const std::string file = loaded_->program.file.string();
  try {
    bind_weights();
    bind_outputs(target);
    bind_inputs(batch);
    find_units();
  } catch (const ProgramError&) { throw; } catch (const c10::Error& e) {
    throw ProgramError(file + ": " + e.what_without_backtrace());
  } catch (const std::exception& e) { throw ProgramError(file + ": " + e.what()); }
}

void ExportedModel::find_units() {
  std::set<int> bound, results{output_slot_};
  for (const auto& [slot, tensor] : weights_) bound.insert(slot);
  for (const auto& [slot, tensor] : constants_) bound.insert(slot);
  for (const auto& [slot, value] : constant_inputs_) bound.insert(slot);
  for (const auto& [slot, buffer] : mutated_buffers_) results.insert(slot);
  std::map<int, const at::Tensor*> parameter_at;
  for (const auto& [slot, tensor] : weights_)
    if (tensor.requires_grad()) parameter_at[slot] = &tensor;
  std::map<std::string, std::shared_ptr<torch::nn::Module>> modules;
  for (const auto& item : named_modules("", /*include_self=*/false)) modules[item.key()] = item.value();
  for (GraphUnit& unit : find_graph_units(loaded_->graph, bound, results)) {
    // A unit's parameters are its module's: those its nodes read, no more and no fewer.
    const auto module = modules.find(unit.module);
    if (module == modules.end()) continue;
    std::set<const void*> own, read;
    for (const at::Tensor& p : module->second->parameters()) own.insert(p.unsafeGetTensorImpl());
    for (int slot : unit.weights)
      if (const auto p = parameter_at.find(slot); p != parameter_at.end())
        read.insert(p->second->unsafeGetTensorImpl());
    if (own.empty() || own != read) continue;
    units_.add(unit.module);
    graph_units_.push_back(std::move(unit));
  }
}

void ExportedModel::run_with_units(std::vector<c10::IValue>& values, const c10::Device& device) {
  const GraphProgram& graph = loaded_->graph;
  const bool training = is_training();
  std::size_t next = 0;
  for (std::size_t i = 0; i < graph_units_.size(); ++i) {
    const GraphUnit& u = graph_units_[i];
    graph.run_nodes(values, next, u.begin, training, device);
    // What the unit reads, held by the forward itself: a checkpointed unit runs it again in
    // backward, after this call has returned.
    std::vector<std::pair<int, c10::IValue>> reads;
    for (int slot : u.reads) reads.emplace_back(slot, values[slot]);
    const UnitForward forward = [loaded = loaded_, reads = std::move(reads), begin = u.begin, end = u.end,
                                 input = u.input, output = u.output, training, device](const at::Tensor& x) {
      std::vector<c10::IValue> local(loaded->graph.slot_count());
      for (const auto& [slot, value] : reads) local[slot] = value;
      local[input] = x;
      loaded->graph.run_nodes(local, begin, end, training, device);
      return local[output].toTensor();
    };
    values[u.output] = units_.run(i, values[u.input].toTensor(), forward);
    next = u.end;
  }
  graph.run_nodes(values, next, graph.nodes().size(), training, device);
}

void ExportedModel::bind_weights() {
  const Program& p = loaded_->program;
  for (const GraphInput& in : p.inputs) {
    const int slot = loaded_->graph.slot_of(in.value);
    if (in.kind == InputKind::parameter || (in.kind == InputKind::buffer && in.persistent)) {
      weights_.emplace_back(slot, register_weight(in.target, p.weights.at(in.target), in.kind == InputKind::parameter));
    } else if (in.kind == InputKind::buffer) {
      constants_.emplace_back(slot, p.weights.at(in.target).clone());
    } else if (in.kind == InputKind::tensor_constant) {
      constants_.emplace_back(slot, p.constants.at(in.target).clone());
    } else if (in.kind == InputKind::constant_input) {
      constant_inputs_.emplace_back(slot, constant_value(in.constant));
    }
  }
}

void ExportedModel::bind_outputs(const TargetDescription& target) {
  const Program& p = loaded_->program;
  const auto buffers = named_buffers();
  for (const GraphOutput& out : p.outputs) {
    if (out.kind == OutputKind::buffer_mutation) {
      const int slot = loaded_->graph.slot_of(out.value);
      const at::Tensor* buffer = buffers.find(out.target);
      if (slot < 0 || !buffer)
        throw ProgramError(p.file.string() + ": the graph's update of buffer '" + out.target + "' names " +
                           (slot < 0 ? "no value the graph computes" : "no buffer of the model"));
      mutated_buffers_.emplace_back(slot, *buffer);
    }
    if (out.kind != OutputKind::user_output || output_slot_ >= 0 || out.value.empty()) continue;
    output_slot_ = loaded_->graph.slot_of(out.value);
    // The output's last dimension against what the task needs (classes, the blank, ...).
    const std::int64_t needed = target.model_outputs();
    const auto shape = p.shapes.find(out.value);
    if (needed <= 0 || shape == p.shapes.end() || shape->second.sizes.empty() || !shape->second.sizes.back()) continue;
    const std::int64_t given = *shape->second.sizes.back();
    if (given != needed)
      throw ProgramError(p.file.string() + ": the model's output has " + std::to_string(given) +
                         " values in its last dimension, the task needs " + std::to_string(needed) +
                         " (the data set's classes): export the model for " + std::to_string(needed) + " outputs");
  }
  if (output_slot_ < 0) throw ProgramError(p.file.string() + ": the program returns no tensor");
}

at::Tensor ExportedModel::register_weight(const std::string& name, const at::Tensor& saved, bool parameter) {
  // Module's registration calls are protected; Holder makes them public, and pointers to them
  // taken through Holder call them on any module, this model (the root) included.
  using Module = torch::nn::Module;
  std::shared_ptr<Module> (Module::*add_module)(std::string, std::shared_ptr<Module>) =
      &Holder::register_module<Module>;
  torch::nn::Module* owner = this;
  std::string rest = name;
  for (auto dot = rest.find('.'); dot != std::string::npos; dot = rest.find('.')) {
    const std::string part = rest.substr(0, dot);
    rest = rest.substr(dot + 1);
    const auto children = owner->named_children();
    const auto* child = children.find(part);
    owner = child ? child->get() : (owner->*add_module)(part, std::make_shared<Holder>()).get();
  }
  if (parameter) return (owner->*&Holder::register_parameter)(rest, saved.clone(), true);
  return (owner->*&Holder::register_buffer)(rest, saved.clone());
}

void ExportedModel::bind_inputs(const BatchDescription& batch) {
  const Program& p = loaded_->program;
  for (const GraphInput& in : p.inputs) {
    if (in.kind != InputKind::user_input) continue;
    UserInput u{loaded_->graph.slot_of(in.value), in.value, "",
                p.shapes.count(in.value) ? &p.shapes.at(in.value) : nullptr};
    u.field = batch.has(in.value) ? in.value : user_inputs_.empty() ? "input" : "";
    if (u.field.empty() || !batch.has(u.field))
      throw ProgramError(p.file.string() + ": input " + in.value + " matches no field of the data set's batches");
    if (u.shape) {
      const std::vector<std::int64_t> sample = batch.shape(u.field);
      bool same = sample.size() + 1 == u.shape->sizes.size();
      for (size_t d = 0; same && d < sample.size(); ++d)
        same = !u.shape->sizes[d + 1] || *u.shape->sizes[d + 1] == sample[d];
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
    throw ProgramError(loaded_->program.file.string() + ": input " + in.graph_name +
                       " was exported with a fixed batch of " + std::to_string(*sizes[0]) +
                       " (dimension 0) and this batch has " + std::to_string(value.size(0)) +
                       ": export it with a dynamic batch, dynamic_shapes={0: "
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
  if (graph_units_.empty())
    graph.run(values, is_training(), device);
  else
    run_with_units(values, device);
  if (!mutated_buffers_.empty()) {
    torch::NoGradGuard no_grad;
    for (auto& [slot, buffer] : mutated_buffers_) buffer.copy_(values[slot].toTensor());
  }
  return {{"output", values[output_slot_].toTensor()}};
}

}  // namespace plugtrain::exported
