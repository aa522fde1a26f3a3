// ddp on a backend that brings its own c10d collective (NCCL for CUDA, through the extension
// "plugtrain.collective" of plugtrain/collective.h): that collective carries the tensors of the
// device type, and Gloo keeps the CPU's (the small metric sums), as torch.distributed does with
// "cpu:gloo,cuda:nccl".
#pragma once

#include <iosfwd>
#include <string>

#include <c10/core/Device.h>

namespace plugtrain {

class BackendHandle;
class Collectives;

// `collective` is the plan's ("gloo", "nccl", ...). Returns the name of the collective that
// carries `device`'s tensors. A plugin that plans a collective it does not export leaves them
// to Gloo, with a warning on `log`; one that fails to make it throws, naming the plugin.
std::string attach_device_collective(Collectives& collectives, const BackendHandle& backend,
                                     const std::string& collective, c10::Device device, std::ostream& log);

}  // namespace plugtrain
