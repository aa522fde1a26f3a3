// The CUDA backend's GraphCapture: CUDA graphs recorded by the runtime part.
#pragma once

#include <memory>
#include <string>

#include "plugtrain/backend.h"

namespace plugtrain::cuda {

// Null with `why_not` when the runtime part cannot be loaded or refuses the device.
std::unique_ptr<GraphCapture> make_cuda_graph_capture(int device, std::string& why_not);

}  // namespace plugtrain::cuda
