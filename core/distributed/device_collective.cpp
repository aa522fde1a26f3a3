#include "distributed/device_collective.h"

#include <ostream>

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include "distributed/c10d_access.h"
#include "plugins/backend_handle.h"
#include "plugins/plugin_error.h"
#include "plugtrain/collective.h"

namespace plugtrain {

namespace {

// What the plugin's collective is set up with (collective.h).
class HostCollectiveSetup final : public CollectiveSetup {
 public:
  HostCollectiveSetup(std::string collective, c10::intrusive_ptr<c10d::Store> store, int rank, int world_size, int device,
                      std::chrono::milliseconds timeout)
      : collective_(std::move(collective)), store_(std::move(store)), rank_(rank), world_size_(world_size), device_(device),
        timeout_(timeout) {}
  std::string collective() const override { return collective_; }
  c10::intrusive_ptr<c10d::Store> store() const override { return store_; }
  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  int device() const override { return device_; }
  std::chrono::milliseconds timeout() const override { return timeout_; }

 private:
  std::string collective_;
  c10::intrusive_ptr<c10d::Store> store_;
  int rank_, world_size_, device_;
  std::chrono::milliseconds timeout_;
};

}  // namespace

std::string attach_device_collective(Collectives& collectives, const BackendHandle& backend,
                                     const std::string& collective, c10::Device device, std::ostream& log) {
  if (collective == "gloo" || collective == "none" || device.is_cpu()) return "gloo";
  CollectiveFactory* factory = backend.collective_factory();
  if (!factory) {
    log << "warning: backend '" << backend.name() << "' plans collective '" << collective
        << "' but offers no extension \"" << kCollectiveExtension << "\"; Gloo carries its tensors\n";
    return "gloo";
  }
  Collectives::Impl& impl = collectives.impl();
  // Its keys apart from Gloo's and ours, as torch.distributed prefixes each device type's
  // backend ("cuda/", the same on every rank whatever its device index).
  const HostCollectiveSetup setup(
      collective,
      c10::make_intrusive<c10d::PrefixStore>(c10::DeviceTypeName(device.type(), /*lower_case=*/true) + "/", impl.store),
      collectives.rank(), collectives.size(), device.index() < 0 ? 0 : device.index(), collectives.timeout());
  c10::intrusive_ptr<c10d::Backend> made =
      call_plugin(backend.name(), "create_collective", [&] { return factory->create(setup); });
  if (!made) throw PluginError(backend.name(), "create_collective returned no " + collective + " backend");
  // The backend says what it is (c10d's own names: "nccl", "ucc", ... or a custom one's).
  impl.group->setBackend(device.type(), c10d::ProcessGroup::strToBackendType(made->getBackendName()), made);
  impl.device_backend = made;
  return collective;
}

}  // namespace plugtrain
