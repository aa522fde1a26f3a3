// ddp for the emulated device: a c10d backend that stages its tensors through host memory and
// runs LibTorch's Gloo on the copies (Gloo knows only CPU and CUDA tensors). A vendor without a
// collective library of its own can start the same way. Each call copies out, waits for Gloo
// and copies back before it returns, so its Work is already complete.
#include <ATen/core/ivalue.h>
#include <ATen/ops/empty_like.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include "emulated_device.h"
#include "staged_collective.h"

namespace emulated {
namespace {

class CompletedWork final : public c10d::Work {
 public:
  explicit CompletedWork(std::vector<at::Tensor> outputs) : outputs_(std::move(outputs)) {
    future_ = c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()));
    future_->markCompleted(c10::IValue(outputs_));
  }
  bool isCompleted() override { return true; }
  bool isSuccess() const override { return true; }
  bool wait(std::chrono::milliseconds) override { return true; }
  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

 private:
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

std::vector<at::Tensor> on_host(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> host;
  host.reserve(tensors.size());
  for (const at::Tensor& t : tensors) host.push_back(t.to(c10::kCPU));  // a copy, never an alias
  return host;
}

void copy_back(std::vector<at::Tensor>& device, const std::vector<at::Tensor>& host) {
  for (std::size_t i = 0; i < device.size(); ++i) device[i].copy_(host[i]);
}

class StagedGloo final : public c10d::Backend {
 public:
  StagedGloo(const plugtrain::CollectiveSetup& setup)
      : c10d::Backend(setup.rank(), setup.world_size()) {
    auto options = c10d::ProcessGroupGloo::Options::create_default(setup.timeout());
    options->threads = 1;
    gloo_ = c10::make_intrusive<c10d::ProcessGroupGloo>(setup.store(), setup.rank(), setup.world_size(), options);
  }

  const std::string getBackendName() const override { return "gloo-staged"; }

  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors, const c10d::AllreduceOptions& opts) override {
    std::vector<at::Tensor> host = on_host(tensors);
    gloo_->allreduce(host, opts)->wait();
    copy_back(tensors, host);
    return c10::make_intrusive<CompletedWork>(tensors);
  }

  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                     const c10d::AllreduceCoalescedOptions& opts) override {
    std::vector<at::Tensor> host = on_host(tensors);
    gloo_->allreduce_coalesced(host, opts)->wait();
    copy_back(tensors, host);
    return c10::make_intrusive<CompletedWork>(tensors);
  }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors, const c10d::BroadcastOptions& opts) override {
    std::vector<at::Tensor> host = on_host(tensors);
    gloo_->broadcast(host, opts)->wait();
    copy_back(tensors, host);
    return c10::make_intrusive<CompletedWork>(tensors);
  }

  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override {
    std::vector<std::vector<at::Tensor>> host_outputs;
    for (auto& list : outputs) host_outputs.push_back(on_host(list));
    std::vector<at::Tensor> host_inputs = on_host(inputs);
    gloo_->allgather(host_outputs, host_inputs, opts)->wait();
    std::vector<at::Tensor> flat;
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      copy_back(outputs[i], host_outputs[i]);
      flat.insert(flat.end(), outputs[i].begin(), outputs[i].end());
    }
    return c10::make_intrusive<CompletedWork>(flat);
  }

  // Sharded training's two (backend.strategy = "fsdp"): each full[i] gathers every rank's
  // shard[i]; each shard[i] gets its rank's part of the sum of every rank's full[i].
  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(std::vector<at::Tensor>& full,
                                                                 std::vector<at::Tensor>& shards,
                                                                 const c10d::AllgatherOptions& opts) override {
    std::vector<at::Tensor> host_full = on_host(full), host_shards = on_host(shards);
    gloo_->allgather_into_tensor_coalesced(host_full, host_shards, opts)->wait();
    copy_back(full, host_full);
    return c10::make_intrusive<CompletedWork>(full);
  }

  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(std::vector<at::Tensor>& shards,
                                                                 std::vector<at::Tensor>& full,
                                                                 const c10d::ReduceScatterOptions& opts) override {
    std::vector<at::Tensor> host_shards = on_host(shards), host_full = on_host(full);
    gloo_->reduce_scatter_tensor_coalesced(host_shards, host_full, opts)->wait();
    copy_back(shards, host_shards);
    return c10::make_intrusive<CompletedWork>(shards);
  }

  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override {
    gloo_->barrier(opts)->wait();
    return c10::make_intrusive<CompletedWork>(std::vector<at::Tensor>{});
  }

 private:
  c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo_;
};

}  // namespace

c10::intrusive_ptr<c10d::Backend> StagedCollective::create(const plugtrain::CollectiveSetup& setup) {
  return c10::make_intrusive<StagedGloo>(setup);
}

}  // namespace emulated
