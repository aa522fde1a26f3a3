// The device a process trains on, as its backend plugin described it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <c10/core/Device.h>
#include <c10/core/MemoryFormat.h>

#include "plugtrain/backend.h"

namespace plugtrain {

namespace data {
class DeviceResident;
}

struct DeviceContext {
  c10::Device device = c10::Device(c10::kCPU);
  LoaderConfig loader;   // how batches reach it
  at::MemoryFormat memory_format = at::MemoryFormat::Contiguous;  // of the batches (train.memory_format)
  bool float64 = true;   // whether running sums can be float64 on it (Capabilities::float64)
  std::function<MemoryInfo()> memory;  // its memory figures, asked once per epoch (may be empty)
  std::function<void()> release_cached_memory;  // after an out-of-memory error (may be empty)
  // The host's waits for the device so far, total and by cause (RuntimeCounts, plugtrain/backend.h); empty
  // when the backend cannot count them.
  std::function<std::uint64_t()> host_waits;
  std::function<std::map<std::string, std::uint64_t>()> host_waits_by_cause;
  // data.on_device: the training, test and validation sets kept on the device (null: made on
  // the host; val_on_device also when the run has no validation split).
  std::shared_ptr<data::DeviceResident> train_on_device, test_on_device, val_on_device;
};

}  // namespace plugtrain
