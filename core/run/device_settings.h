// The run's numeric and layout settings for its device: TF32 for float32 matrix products and
// convolutions (train.tf32), cuDNN's autotuner (train.cudnn_benchmark) and the memory format
// of convolutional models and their batches (train.memory_format). Set through ATen's global
// context, which lives in the CPU library: the host still links no CUDA.
#pragma once

#include <string>

#include <c10/core/MemoryFormat.h>

#include "config/experiment.h"
#include "plugtrain/model.h"

namespace plugtrain {

struct DeviceSettings {
  at::MemoryFormat memory_format = at::MemoryFormat::Contiguous;  // for the batches
  std::string line;  // what was set and why, for the run's log ("" when nothing applies)
};

// Applies the settings (process-wide) and converts `model`'s 4-d parameters to channels-last
// when that is the format chosen. `accelerator`: the backend's device is not the host CPU
// (Capabilities::host_cpu), the only device fact the host needs here. The TF32 and cuDNN
// switches only reach NVIDIA's libraries, so they are set whatever the device and reported
// on accelerators. memory_format "auto": channels-last for a model with 2-d convolutions
// (tensor cores want it; on the CPU oneDNN then convolves without reordering around every
// layer: ResNet-18 on CIFAR trained ~1.25x faster, bench/resnet_cifar_bench), else contiguous.
DeviceSettings apply_device_settings(const Experiment& e, bool accelerator, Model& model);

// The model's 4-d parameters (convolution weights) in `format` (a dp replica follows replica 0).
void convert_memory_format(Model& model, at::MemoryFormat format);

}  // namespace plugtrain
