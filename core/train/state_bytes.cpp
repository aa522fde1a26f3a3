#include "train/state_bytes.h"

#include <set>

#include <torch/optim/optimizer.h>

#include "optim/state_tensors.h"

namespace plugtrain {

std::int64_t training_state_bytes(const std::vector<at::Tensor>& model_parameters,
                                  const std::vector<at::Tensor>& stepped_parameters,
                                  torch::optim::Optimizer& optimizer) {
  std::set<const void*> counted;
  std::int64_t bytes = 0;
  auto count = [&](const at::Tensor& t) {
    if (!t.defined() || !t.has_storage()) return;
    const c10::StorageImpl* storage = t.storage().unsafeGetStorageImpl();
    if (counted.insert(storage).second) bytes += static_cast<std::int64_t>(storage->nbytes());
  };
  for (const auto* list : {&model_parameters, &stepped_parameters})
    for (const at::Tensor& p : *list) {
      count(p);
      count(p.grad());
    }
  for (auto& [key, state] : optimizer.state())
    if (state)
      for_each_state_tensor(*state, [&](const std::string&, const at::Tensor& field, const auto&) { count(field); });
  return bytes;
}

}  // namespace plugtrain
