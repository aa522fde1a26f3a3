#include "strategy/sharded_unit.h"

#include <ATen/ATen.h>

namespace plugtrain {

ShardedUnit::ShardedUnit(std::string name, const std::vector<at::Tensor>& parameters, int rank, int world_size,
                         const FlatOptions& options)
    : name_(std::move(name)), rank_(rank), gathered_(true) {
  std::vector<at::Tensor> matrices, rest;
  for (const at::Tensor& p : parameters) (p.dim() >= 2 ? matrices : rest).push_back(p);
  if (!matrices.empty()) flats_.push_back(std::make_unique<FlatParameter>(matrices, rank, world_size, options));
  if (!rest.empty()) flats_.push_back(std::make_unique<FlatParameter>(rest, rank, world_size, options));
}

std::int64_t ShardedUnit::full_bytes() const {
  std::int64_t bytes = 0;
  for (const auto& f : flats_) bytes += f->full().numel() * f->bytes_per_element();
  return bytes;
}

std::int64_t ShardedUnit::shard_bytes() const {
  std::int64_t bytes = 0;
  for (const auto& f : flats_) bytes += f->shard_numel() * std::int64_t(sizeof(float));
  return bytes;
}

void ShardedUnit::start_gather(Collectives& collectives) {
  if (gathered_ || gathering_.started()) return;
  if (flats_.empty()) {  // a root with no parameters of its own
    gathered_ = true;
    return;
  }
  std::vector<at::Tensor> full;
  gather_inputs_.clear();
  for (const auto& f : flats_) {
    f->allocate();
    full.push_back(f->full());
    // A copy: the shard may be part of the very buffer gathered into.
    gather_inputs_.push_back(f->shard().detach().to(f->full().scalar_type(), /*non_blocking=*/false, /*copy=*/true));
  }
  gathering_ = collectives.all_gather_into(full, gather_inputs_);
}

void ShardedUnit::finish_gather() {
  if (gathered_) return;
  gathering_.wait();
  gather_inputs_.clear();
  gathered_ = true;
}

void ShardedUnit::release() {
  if (gathering_.started()) gathering_.wait();  // the collective still writes into the memory
  gather_inputs_.clear();
  for (const auto& f : flats_) f->release();
  gathered_ = false;
}

void ShardedUnit::allocate_as_gathered() {
  if (gathering_.started()) gathering_.wait();
  for (const auto& f : flats_) f->allocate();
  gathered_ = true;
}

bool ShardedUnit::take_gradients() {
  if (reduced_) return false;
  reduced_ = true;
  gradients_.clear();
  gradient_shards_.clear();
  for (const auto& f : flats_) gradients_.push_back(f->take_flat_gradients());
  return !flats_.empty();
}

void ShardedUnit::start_reduce_scatter(Collectives& collectives) {
  if (!take_gradients()) return;
  for (std::size_t i = 0; i < flats_.size(); ++i)
    gradient_shards_.push_back(at::empty({flats_[i]->shard_numel()}, gradients_[i].options()));
  reducing_ = collectives.reduce_scatter_sum(gradient_shards_, gradients_);
}

void ShardedUnit::all_reduce_gradients(Collectives& collectives) {
  if (!take_gradients()) return;
  collectives.all_reduce_sum(gradients_);
  for (std::size_t i = 0; i < flats_.size(); ++i)
    gradient_shards_.push_back(gradients_[i].narrow(0, flats_[i]->shard_numel() * rank_, flats_[i]->shard_numel()));
}

void ShardedUnit::finish_reduce() {
  if (gradient_shards_.empty()) return;  // nothing started, or finished already
  reducing_.wait();
  for (std::size_t i = 0; i < gradient_shards_.size(); ++i) flats_[i]->add_shard_gradient(gradient_shards_[i]);
  gradients_.clear();
  gradient_shards_.clear();
}

}  // namespace plugtrain
