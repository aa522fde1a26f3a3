// Probing NVIDIA GPUs through the driver API, loaded with dlopen, so that a machine
// without a driver gets a reason instead of a failed load, and no CUDA context is created.
#pragma once

#include "plugtrain/backend.h"

namespace plugtrain::cuda {

// runtime_version: the CUDA runtime version the plugin runs with (e.g. 13000).
ProbeResult probe_cuda_driver(int runtime_version);

}  // namespace plugtrain::cuda
