// The "exported" model: a torch.export program (program.h) as a plugtrain model. Its parameters
// and buffers are registered under the Python module's own names ("layer1.0.conv1.weight"), so
// checkpoints, `plugtrain export` and safetensors carry the keys the user's class loads; the
// graph runs through the dispatcher (graph_program.h) in train() or eval() as the module is.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graph_program.h"
#include "graph_units.h"
#include "plugtrain/model.h"
#include "plugtrain/units.h"

namespace plugtrain::exported {

// A program read and compiled once per file (and graph pass), shared by every model built from
// it; `graph_pass`: GraphProgram::optimize (graph_fusion.h) applied.
struct LoadedProgram {
  Program program;
  GraphProgram graph;
  LoadedProgram(Program p, bool graph_pass) : program(std::move(p)), graph(program) {
    if (graph_pass) graph.optimize(program);
  }
};

// Reads (or finds already read) `file`; throws ProgramError.
std::shared_ptr<const LoadedProgram> load_program(const std::filesystem::path& file, bool graph_pass = true);

class ExportedModel final : public Model {
 public:
  // Checks the data against the export (per-sample shapes, dtypes, the output's size): throws
  // ProgramError naming the file and what differs.
  ExportedModel(std::shared_ptr<const LoadedProgram> loaded, const BatchDescription& batch,
                const TargetDescription& target);
  TensorMap forward_batch(const TensorMap& batch) override;
  // Its units (plugtrain/units.h): the calls of top-level submodules that can run as one
  // (graph_units.h), when there are any.
  void* extension(const char* name, std::uint32_t version) override {
    return graph_units_.empty() ? nullptr : units_.extension(name, version);
  }

 private:
  struct UserInput {
    int slot;
    std::string graph_name;  // "x"
    std::string field;       // the batch's field ("input")
    const ValueShape* shape;
  };
  std::shared_ptr<const LoadedProgram> loaded_;
  std::vector<std::pair<int, at::Tensor>> weights_;    // registered parameters and buffers
  std::vector<std::pair<int, at::Tensor>> constants_;  // non-persistent buffers, tensor constants
  std::vector<std::pair<int, c10::IValue>> constant_inputs_;
  std::vector<UserInput> user_inputs_;
  std::vector<std::pair<int, at::Tensor>> mutated_buffers_;  // a functional graph's new buffer values
  int output_slot_ = -1;
  std::optional<c10::Device> checked_device_;
  std::vector<GraphUnit> graph_units_;
  Units units_;

  void bind_weights();
  void bind_outputs(const TargetDescription& target);  // checks the output's size against the task
  void bind_inputs(const BatchDescription& batch);
  void find_units();  // after the weights and outputs are bound
  // The graph over `values`, each unit through units_ (its runner gathers, checkpoints, ...).
  void run_with_units(std::vector<c10::IValue>& values, const c10::Device& device);
  // Registers a copy of `saved` under its Python name, in child modules for each dotted part.
  at::Tensor register_weight(const std::string& name, const at::Tensor& saved, bool parameter);
  void check_batch(const UserInput& in, const at::Tensor& value) const;
  at::Tensor& on_device(at::Tensor& constant, const c10::Device& device);
};

}  // namespace plugtrain::exported
