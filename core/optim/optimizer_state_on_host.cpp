#include "optim/optimizer_state_on_host.h"

#include <vector>

#include "optim/state_tensors.h"

namespace plugtrain {

namespace {

class HostCopies {
 public:
  // `set` puts a tensor into the state field that holds `field`. The handle is copied first:
  // `field` is the state's own member (the getters return references), which `set` replaces.
  template <class Set>
  void swap(const at::Tensor& field, Set set) {
    const at::Tensor original = field;
    if (!original.defined() || original.is_cpu()) return;
    set(original.cpu());
    restores_.emplace_back([original, set] { set(original); });
  }
  void restore() {
    for (auto& put_back : restores_) put_back();
    restores_.clear();
  }

 private:
  std::vector<std::function<void()>> restores_;
};

}  // namespace

void with_optimizer_state_on_host(torch::optim::Optimizer& optimizer, const std::function<void()>& save) {
  HostCopies copies;
  try {
    for (auto& [key, state] : optimizer.state())
      if (state)
        for_each_state_tensor(
            *state, [&](const std::string&, const at::Tensor& field, const auto& set) { copies.swap(field, set); });
    save();
  } catch (...) {
    copies.restore();
    throw;
  }
  copies.restore();
}

}  // namespace plugtrain
