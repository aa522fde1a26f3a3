// fsdp's checkpoints (FsdpStrategy::save_through, load_through): the model whole and an
// optimizer of its own parameters, as a run of one process writes them (PyTorch FSDP's full
// state dict, offloaded to the CPU and written by rank 0), so a checkpoint resumes at any
// number of processes, under ddp or on one device, and `plugtrain export` reads it as any
// other. The shards' weights and optimizer state are gathered into host copies one flat
// parameter at a time on saving, and cut back into this rank's shard on loading.
#include <map>

#include <ATen/ATen.h>
#include <torch/optim/optimizer.h>

#include "optim/state_tensors.h"
#include "strategy/fsdp_strategy.h"

namespace plugtrain {

namespace {

// The options of each group (learning rate, decay, betas) as the run has them now.
void copy_group_options(torch::optim::Optimizer& from, torch::optim::Optimizer& to) {
  for (std::size_t g = 0; g < from.param_groups().size() && g < to.param_groups().size(); ++g)
    to.param_groups()[g].set_options(from.param_groups()[g].options().clone());
}

torch::optim::OptimizerParamState* state_of(torch::optim::Optimizer& optimizer, const at::Tensor& parameter) {
  const auto found = optimizer.state().find(parameter.unsafeGetTensorImpl());
  return found == optimizer.state().end() ? nullptr : found->second.get();
}

// One flat parameter's shard state, gathered over the ranks and cut into each parameter's.
void gather_state(FlatParameter& flat, torch::optim::Optimizer& shards, torch::optim::Optimizer& whole,
                  Collectives& collectives) {
  torch::optim::OptimizerParamState* shard_state = state_of(shards, flat.shard());
  if (!shard_state) return;  // no step yet
  std::map<std::string, at::Tensor> full;
  for_each_state_tensor(*shard_state, [&](const std::string& name, const at::Tensor& field, const auto&) {
    if (!field.defined()) return;
    std::vector<at::Tensor> out{at::empty({flat.shard_numel() * flat.world_size()}, field.options())};
    std::vector<at::Tensor> in{field.contiguous()};
    collectives.all_gather_into(out, in).wait();
    full[name] = out[0];
  });
  for (std::size_t i = 0; i < flat.parameters().size(); ++i) {
    const at::Tensor& p = flat.parameters()[i];
    std::unique_ptr<torch::optim::OptimizerParamState> state = shard_state->clone();
    for_each_state_tensor(*state, [&](const std::string& name, const at::Tensor& field, const auto& set) {
      if (field.defined()) set(full.at(name).narrow(0, flat.offsets()[i], p.numel()).view(p.sizes()).to(at::kCPU));
    });
    whole.state()[p.unsafeGetTensorImpl()] = std::move(state);
  }
}

// Each parameter's state (loaded from a checkpoint) flattened, and this rank's part of it kept.
void scatter_state(FlatParameter& flat, torch::optim::Optimizer& whole, torch::optim::Optimizer& shards) {
  torch::optim::OptimizerParamState* first = nullptr;
  for (const at::Tensor& p : flat.parameters())
    if (!first) first = state_of(whole, p);
  if (!first) return;  // the checkpoint's run had not stepped
  std::unique_ptr<torch::optim::OptimizerParamState> state = first->clone();
  for_each_state_tensor(*state, [&](const std::string& name, const at::Tensor& field, const auto& set) {
    if (!field.defined()) return;
    at::Tensor flat_field = at::zeros({flat.shard_numel() * flat.world_size()}, field.options());
    for (std::size_t i = 0; i < flat.parameters().size(); ++i) {
      torch::optim::OptimizerParamState* own = state_of(whole, flat.parameters()[i]);
      if (!own) continue;
      for_each_state_tensor(*own, [&](const std::string& own_name, const at::Tensor& own_field, const auto&) {
        if (own_name == name && own_field.defined())
          flat_field.narrow(0, flat.offsets()[i], own_field.numel()).copy_(own_field.reshape(-1));
      });
    }
    set(flat_field.narrow(0, flat.shard_numel() * flat.rank(), flat.shard_numel()).clone());
  });
  shards.state()[flat.shard().unsafeGetTensorImpl()] = std::move(state);
}

}  // namespace

std::vector<at::Tensor> FsdpStrategy::point_parameters_at_host_copies() {
  std::vector<at::Tensor> copies;
  collectively("gathering the weights for a checkpoint", [&] {
    for (auto& unit : units_)
      for (const auto& flat : unit->flats()) {
        std::vector<at::Tensor> out{at::empty({flat->full().numel()}, flat->shard().options().requires_grad(false))};
        std::vector<at::Tensor> in{flat->shard().detach().clone()};
        collectives_.all_gather_into(out, in).wait();
        copies.push_back(out[0].to(at::kCPU));
        flat->point_parameters_at(copies.back());
      }
  });
  return copies;
}

void FsdpStrategy::point_parameters_back(const std::vector<at::Tensor>& values) {
  std::size_t i = 0;
  for (auto& unit : units_) {
    unit->allocate_as_gathered();  // the views need the memory: one unit at a time
    for (const auto& flat : unit->flats()) {
      if (!values.empty()) flat->full().copy_(values.at(i++));
      flat->point_parameters_at(flat->full());
    }
    if (releases_parameters()) unit->release();
  }
}

void FsdpStrategy::save_through(torch::optim::Optimizer& optimizer,
                                const std::function<void(torch::optim::Optimizer&)>& write) {
  // The checkpoint is written from the host: the float32 weights the shards keep (under bf16
  // parameters too) and each parameter's optimizer state, gathered one flat parameter at a time,
  // so the device holds at most one flat parameter's more meanwhile (FSDP's full state dict with
  // offload to the CPU).
  at::NoGradGuard no_grad;
  const std::vector<at::Tensor> host = point_parameters_at_host_copies();
  std::unique_ptr<torch::optim::Optimizer> whole = options_.whole_optimizer(model_.parameters());
  copy_group_options(optimizer, *whole);
  collectively("gathering the optimizer's state for a checkpoint", [&] {
    for (auto& unit : units_)
      for (const auto& flat : unit->flats()) gather_state(*flat, optimizer, *whole, collectives_);
  });
  try {
    if (is_rank_zero()) write(*whole);
  } catch (...) {
    point_parameters_back({});  // the parameters are the full buffers' again, whatever failed
    throw;
  }
  whole.reset();
  point_parameters_back({});  // their values are unchanged where they were kept
}

void FsdpStrategy::load_through(torch::optim::Optimizer& optimizer,
                                const std::function<void(torch::optim::Optimizer&)>& read) {
  // Every rank reads the checkpoint: the weights into host buffers laid out as the full ones,
  // which the parameters view meanwhile; then each rank keeps its shard of them.
  std::vector<at::Tensor> host;
  for (auto& unit : units_)
    for (const auto& flat : unit->flats()) {
      host.push_back(at::zeros({flat->full().numel()}, flat->shard().options().requires_grad(false).device(at::kCPU)));
      flat->point_parameters_at(host.back());
    }
  std::unique_ptr<torch::optim::Optimizer> whole = options_.whole_optimizer(model_.parameters());
  read(*whole);
  at::NoGradGuard no_grad;
  copy_group_options(*whole, optimizer);
  std::size_t i = 0;
  for (auto& unit : units_)
    for (const auto& flat : unit->flats()) {
      flat->take_shard_from(host[i++]);
      scatter_state(*flat, *whole, optimizer);
    }
  whole.reset();
  point_parameters_back(host);
}

}  // namespace plugtrain
