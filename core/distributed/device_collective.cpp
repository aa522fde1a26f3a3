#include "distributed/device_collective.h"

#include <ostream>

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include "distributed/c10d_access.h"
#include "plugins/backend_handle.h"
#include "plugins/plugin_error.h"
#include "plugtrain/collective.h"

namespace plugtrain {

std::string attach_device_collective(Collectives& collectives, const BackendHandle& backend,
                                     const std::string& collective, c10::Device device, std::ostream& log) {
  if (collective == "gloo" || collective == "none" || device.is_cpu()) return "gloo";
  CreateCollective* create = backend.collective_factory();
  if (!create) {
    log << "warning: backend '" << backend.name() << "' plans collective '" << collective
        << "' but its plugin exports no plugtrain_create_collective; Gloo carries its tensors\n";
    return "gloo";
  }
  Collectives::Impl& impl = collectives.impl();
  CollectiveSetup setup;
  setup.collective = collective;
  // Its keys apart from Gloo's and ours, as torch.distributed prefixes each device type's
  // backend ("cuda/", the same on every rank whatever its device index).
  setup.store = c10::make_intrusive<c10d::PrefixStore>(c10::DeviceTypeName(device.type(), /*lower_case=*/true) + "/",
                                                       impl.store);
  setup.rank = collectives.rank();
  setup.world_size = collectives.size();
  setup.device = device.index() < 0 ? 0 : device.index();
  setup.timeout = collectives.timeout();
  c10::intrusive_ptr<c10d::Backend> made =
      call_plugin(backend.name(), "create_collective", [&] { return (*create)(setup); });
  if (!made) throw PluginError(backend.name(), "create_collective returned no " + collective + " backend");
  // The backend says what it is (c10d's own names: "nccl", "ucc", ... or a custom one's).
  impl.group->setBackend(device.type(), c10d::ProcessGroup::strToBackendType(made->getBackendName()), made);
  impl.device_backend = made;
  return collective;
}

}  // namespace plugtrain
