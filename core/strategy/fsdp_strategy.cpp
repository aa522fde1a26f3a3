#include "strategy/fsdp_strategy.h"

#include <algorithm>
#include <ostream>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include "config/config_error.h"
#include "strategy/activation_checkpoint.h"
#include "util/format.h"

namespace plugtrain {

namespace {

// Identity functions whose backward tells the strategy where backward has got to: the
// gradient of a unit's output has arrived (its backward is next: gather it), or that of its
// input (its backward is done: sum its gradients, release it). The hooks FSDP registers on a
// unit's outputs and inputs.
template <bool Before>
struct UnitBoundary : torch::autograd::Function<UnitBoundary<Before>> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, FsdpStrategy* strategy,
                            std::int64_t unit) {
    ctx->saved_data["strategy"] = reinterpret_cast<std::int64_t>(strategy);
    ctx->saved_data["unit"] = unit;
    return x;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto* strategy = reinterpret_cast<FsdpStrategy*>(ctx->saved_data["strategy"].toInt());
    const auto unit = static_cast<std::size_t>(ctx->saved_data["unit"].toInt());
    if (Before)
      strategy->before_unit_backward(unit);
    else
      strategy->after_unit_backward(unit);
    return {grads.at(0), at::Tensor(), at::Tensor()};
  }
};
using BeforeUnitBackward = UnitBoundary<true>;
using AfterUnitBackward = UnitBoundary<false>;

// Gloo and NCCL reduce-scatter; a vendor's collective may not. Asked once, before training,
// with one element per rank.
void check_reduce_scatter(Collectives& collectives, c10::Device device) {
  std::vector<at::Tensor> full{at::zeros({collectives.size()}, at::TensorOptions().device(device))};
  std::vector<at::Tensor> part{at::zeros({1}, at::TensorOptions().device(device))};
  try {
    collectives.reduce_scatter_sum(part, full).wait();
  } catch (const CollectiveError& e) {
    throw ConfigError(std::string("backend.strategy = \"fsdp\" needs a collective that reduce-scatters ") +
                      device.str() + " tensors, and this one cannot (" + first_line(e.what()) + "); use \"ddp\"");
  }
}

}  // namespace

FsdpStrategy::FsdpStrategy(Model& model, Collectives& collectives, const FsdpOptions& options, std::ostream& log)
    : RanksStrategy(collectives), model_(model), options_(options), layout_(unit_layout(model)) {
  const std::vector<at::Tensor> parameters = model.parameters();
  check_reduce_scatter(collectives, options.device);
  buffers_ = model.buffers();
  collectively("sharing rank 0's weights", [&] {
    at::NoGradGuard no_grad;
    std::vector<at::Tensor> state = parameters;
    state.insert(state.end(), buffers_.begin(), buffers_.end());
    collectives_.broadcast_from_rank_zero(state);
  });
  std::int64_t full_bytes = 0, shard_bytes = 0;
  for (const UnitParameters& unit : layout_.units) {
    units_.push_back(
        std::make_unique<ShardedUnit>(unit.name, unit.parameters, collectives.rank(), collectives.size(),
                                      FlatOptions{options.device, options.param_dtype, options.reduce_dtype,
                                                  /*shard_in_full=*/!releases_parameters()}));
    full_bytes += units_.back()->full_bytes();
    shard_bytes += units_.back()->shard_bytes();
    if (releases_parameters()) units_.back()->release();  // one unit at a time on the device
  }
  if (layout_.declared) layout_.declared->set_runner(this);
  note_gathered();
  log << "fsdp: " << units_line(layout_) << "; shard = \"" << word_of(options.level) << "\": each of "
      << collectives.size() << " ranks keeps " << format_bytes(std::uint64_t(shard_bytes)) << " of the "
      << format_bytes(std::uint64_t(full_bytes)) << " of parameters"
      << (options.param_dtype != at::kFloat
              ? " (float32 shards, gathered in " + std::string(c10::toString(options.param_dtype)) + ")"
              : std::string())
      << (options.reduce_dtype != at::kFloat
              ? ", gradients summed in " + std::string(c10::toString(options.reduce_dtype))
              : std::string())
      << (options.checkpoint_units ? "; units checkpointed" : "") << "\n";
}

FsdpStrategy::~FsdpStrategy() {
  if (layout_.declared) layout_.declared->set_runner(nullptr);
}

void FsdpStrategy::note_gathered() {
  std::int64_t bytes = 0;
  for (const auto& unit : units_)
    if (unit->gathered() || unit->gathering()) bytes += unit->full_bytes();
  peak_gathered_bytes_ = std::max(peak_gathered_bytes_, bytes);
}

void FsdpStrategy::gather(std::size_t unit) {
  ShardedUnit& u = *units_.at(unit);
  if (u.gathered()) return;
  collectively("gathering unit '" + u.name() + "'", [&] {
    u.start_gather(collectives_);
    note_gathered();
    u.finish_gather();
  });
}

void FsdpStrategy::prefetch(std::size_t unit) {
  ShardedUnit& u = *units_.at(unit);
  if (u.gathered() || u.gathering()) return;
  collectively("gathering unit '" + u.name() + "'", [&] { u.start_gather(collectives_); });
  note_gathered();
}

void FsdpStrategy::release(std::size_t unit) { units_.at(unit)->release(); }

void FsdpStrategy::share_buffers() {
  if (buffers_.empty()) return;
  collectively("sharing rank 0's buffers", [&] {
    at::NoGradGuard no_grad;
    collectives_.broadcast_from_rank_zero(buffers_);
  });
}

void FsdpStrategy::before_forward() {
  share_buffers();
  gather(layout_.root());
  if (layout_.root() > 0) prefetch(0);
}

at::Tensor FsdpStrategy::cast_input(const at::Tensor& t) const {
  return options_.param_dtype != at::kFloat && t.defined() && t.is_floating_point() ? t.to(options_.param_dtype) : t;
}

at::Tensor FsdpStrategy::cast_output(const at::Tensor& t) const {
  return options_.param_dtype != at::kFloat && t.defined() && t.is_floating_point() ? t.to(at::kFloat) : t;
}

TensorMap FsdpStrategy::cast_fields(const TensorMap& fields, bool in) const {
  if (options_.param_dtype == at::kFloat) return fields;
  TensorMap cast;
  for (const auto& [name, t] : fields) cast[name] = in ? cast_input(t) : cast_output(t);
  return cast;
}

at::Tensor FsdpStrategy::forward(const at::Tensor& inputs) {
  before_forward();
  return cast_output(forward_input(model_, cast_input(inputs)));
}

at::Tensor FsdpStrategy::evaluate(const at::Tensor& inputs) { return forward(inputs); }

TensorMap FsdpStrategy::forward_fields(const TensorMap& batch) {
  before_forward();
  return cast_fields(model_.forward_batch(cast_fields(batch, /*in=*/true)), /*in=*/false);
}

TensorMap FsdpStrategy::evaluate_fields(const TensorMap& batch) { return forward_fields(batch); }

void FsdpStrategy::before_evaluation() { share_buffers(); }

void FsdpStrategy::evaluation_passes(std::int64_t passes) {
  std::vector<double> each(static_cast<std::size_t>(processes()), 0.0);
  each[static_cast<std::size_t>(collectives_.rank())] = double(passes);
  each = sum(each);
  missing_passes_ = static_cast<std::int64_t>(*std::max_element(each.begin(), each.end())) - passes;
}

void FsdpStrategy::after_evaluation() {
  // A shard of the evaluation data may hold a batch fewer than another: this rank then makes
  // the passes it lacks as the collectives of a forward pass alone (the buffers shared, the root
  // gathered, each unit gathered and released in order), while the others make their last real
  // ones, so every gather finds its peers.
  for (; missing_passes_ > 0; --missing_passes_) {
    before_forward();
    for (std::size_t unit = 0; unit < layout_.root(); ++unit) {
      gather(unit);
      if (unit + 1 < layout_.root()) prefetch(unit + 1);
      if (releases_parameters()) release(unit);
    }
  }
}

at::Tensor FsdpStrategy::run(std::size_t unit, const at::Tensor& input, const UnitForward& forward) {
  gather(unit);
  if (unit + 1 < layout_.root()) prefetch(unit + 1);
  const bool training = at::GradMode::is_enabled();
  const auto index = static_cast<std::int64_t>(unit);
  at::Tensor x = training && input.requires_grad() ? AfterUnitBackward::apply(input, this, index) : input;
  at::Tensor y = training && options_.checkpoint_units ? run_checkpointed(x, forward) : forward(x);
  if (releases_parameters()) release(unit);
  return training && y.requires_grad() ? BeforeUnitBackward::apply(y, this, index) : y;
}

void FsdpStrategy::before_unit_backward(std::size_t unit) {
  gather(unit);
  if (unit > 0) prefetch(unit - 1);
}

void FsdpStrategy::after_unit_backward(std::size_t unit) {
  if (syncing_) sum_gradients(unit);
  if (releases_parameters()) release(unit);
}

void FsdpStrategy::sum_gradients(std::size_t unit) {
  ShardedUnit& u = *units_.at(unit);
  if (u.reduced()) return;
  collectively("summing the gradients of unit '" + u.name() + "'", [&] {
    if (options_.level == ShardLevel::optimizer) {
      u.all_reduce_gradients(collectives_);  // the whole gradient everywhere, as ddp has it (ZeRO-1)
      return;
    }
    u.start_reduce_scatter(collectives_);
    // One sum in flight behind this one: the one before is done with by now (it started a
    // unit's backward earlier), and its full-size gradient buffers go before more come.
    if (reducing_ && reducing_ != &u) reducing_->finish_reduce();
    reducing_ = &u;
  });
}

void FsdpStrategy::backward(const std::function<void()>& backward) {
  syncing_ = options_.level != ShardLevel::optimizer;  // ZeRO-1 sums everything after backward
  collectively("backward", backward);
  finish_backward(/*synced=*/true);
}

void FsdpStrategy::backward_unsynced(const std::function<void()>& backward) {
  syncing_ = false;
  collectively("backward", backward);
  finish_backward(/*synced=*/false);
}

void FsdpStrategy::finish_backward(bool synced) {
  if (synced) {
    // Units whose backward hook never ran (the root; a unit whose input needs no gradient),
    // from the last to the first as backward met them.
    for (std::size_t i = units_.size(); i-- > 0;) sum_gradients(i);
    collectively("summing the gradients", [&] {
      for (auto& unit : units_) {
        unit->finish_reduce();
        unit->reset_reduced();
      }
    });
    reducing_ = nullptr;
  }
  if (releases_parameters())
    for (auto& unit : units_) unit->release();
}

SteppedParameters FsdpStrategy::stepped_parameters(const std::vector<at::Tensor>&) const {
  SteppedParameters stepped;
  for (const auto& unit : units_)
    for (const auto& flat : unit->flats()) {
      stepped.tensors.push_back(flat->shard());
      stepped.matrices.push_back(flat->parameters().front().dim() >= 2);
    }
  return stepped;
}

void FsdpStrategy::after_optimizer_step() {
  // Gathered parameters are now stale. Kept whole ("optimizer", "gradients"): gathered again
  // at once, every unit's gathering travelling together; else at the next forward.
  for (auto& unit : units_) unit->mark_stale();
  if (releases_parameters()) return;
  collectively("gathering the updated parameters", [&] {
    for (auto& unit : units_) unit->start_gather(collectives_);
    for (auto& unit : units_) unit->finish_gather();
  });
}

std::optional<ShardingFigures> FsdpStrategy::sharding() const {
  ShardingFigures f;
  f.shard = word_of(options_.level);
  f.units = static_cast<std::int64_t>(layout_.root());
  for (std::size_t i = 0; i < layout_.root(); ++i)
    f.largest_unit_bytes = std::max(f.largest_unit_bytes, units_[i]->full_bytes());
  f.root_bytes = units_.back()->full_bytes();
  f.peak_gathered_bytes = peak_gathered_bytes_;
  return f;
}

at::Tensor FsdpStrategy::gradient_norm(const std::vector<at::Tensor>& gradients) {
  const std::vector<at::Tensor> norms = at::_foreach_norm(gradients, 2);
  std::vector<at::Tensor> squares{at::stack(norms).square().sum().reshape({1})};
  collectively("summing the gradient norm", [&] { collectives_.all_reduce_sum(squares); });
  return squares[0].sqrt().reshape({});
}

}  // namespace plugtrain
