// PyTorch's DataParallel for plugtrain models ("dp"): one process, the model replicated over
// the devices of one machine. Replica 0 is the model itself: its parameters are the ones the
// optimizer steps and checkpoints hold, so nothing is wrapped.
//
// Each forward, as torch.nn.DataParallel does: the other replicas receive replica 0's
// parameters and buffers (in evaluation, once: the weights do not change between its batches),
// the batch is split along its first dimension, every replica runs on its part in its own
// thread, and the outputs are gathered on device 0, where the loss is taken. One backward then
// reaches every replica (on CUDA the autograd engine runs each device's part on that device's
// thread); gather_gradients() adds the replicas' gradients into replica 0's, which gives the
// gradient of the whole batch.
//
// As in PyTorch, batch-norm statistics are those of each replica's part, and only replica 0's
// running statistics are kept.
#pragma once

#include <memory>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "plugtrain/model.h"

namespace plugtrain {

class DataParallel {
 public:
  // replicas[i] lives on devices[i]; all built by the same factory with the same options.
  DataParallel(std::vector<std::shared_ptr<Model>> replicas, std::vector<c10::Device> devices);

  // The output for the whole batch, on devices[0]. Differentiable: backward reaches every replica.
  at::Tensor forward(const at::Tensor& inputs);
  // After backward: every replica's gradients added into replica 0's (the ones the optimizer steps).
  void gather_gradients();

 private:
  void copy_weights_to_replicas();

  std::vector<std::shared_ptr<Model>> replicas_;
  std::vector<c10::Device> devices_;
  std::vector<std::vector<at::Tensor>> parameters_, buffers_;  // [replica][tensor]
  bool copied_for_evaluation_ = false;  // the replicas hold replica 0's weights since training stopped
};

}  // namespace plugtrain
