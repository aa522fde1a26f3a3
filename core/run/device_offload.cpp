#include "run/device_offload.h"

#include <memory>
#include <string>
#include <utility>

#include "data/device_resident.h"
#include "data/from_experiment.h"
#include "optim/fused_optimizers.h"
#include "train/graph_step.h"
#include "util/error.h"
#include "util/format.h"
#include "util/result.h"

namespace plugtrain {

namespace {

// Fine to place the data on the device with data.on_device = "auto" (or true); otherwise
// refused with why it stays on the host.
Status data_may_move(const Experiment& e, const RunPlan& plan, BackendHandle& backend, int device_index,
                     const data::DatasetPair& data, const data::AugmentOptions& augmentation, std::int64_t bytes) {
  if (Status servable = data::servable_on_device(data.train, augmentation); !servable) return servable;
  if (Status servable = data::servable_on_device(data.test, {}); !servable) return servable;
  if (data.has_val())
    if (Status servable = data::servable_on_device(data.val, {}); !servable) return servable;
  if (e.data.on_device == true) return Status::fine();
  if (plan.capabilities.host_cpu)
    return WhyNot{"the training device is the host, whose memory the loader threads already use"};
  const MemoryInfo memory = backend.memory(device_index);
  if (!memory.free_bytes)
    return WhyNot{"the device's free memory is unknown" + (memory.note.empty() ? "" : " (" + memory.note + ")")};
  if (bytes > std::int64_t(*memory.free_bytes / 4))
    return WhyNot{format_bytes(std::uint64_t(bytes)) + " is more than a quarter of the device's free " +
                  format_bytes(memory.free_bytes)};
  return Status::fine();
}

}  // namespace

void place_data(const Experiment& e, const RunPlan& plan, BackendHandle& backend, int device_index,
                const data::DatasetPair& data, DeviceContext& device, std::ostream& log) {
  if (e.data.on_device == false) return;
  const data::AugmentOptions augmentation = data::augment_options(e.data.augment);
  // A data set without test labels (TinyImageNet) is tested on its val split: one copy serves both.
  const bool test_is_val = data.test_is_val;
  const std::int64_t bytes = data::bytes_on_device(data.train, augmentation) + data::bytes_on_device(data.test, {}) +
                             (data.has_val() && !test_is_val ? data::bytes_on_device(data.val, {}) : 0);
  if (Status may = data_may_move(e, plan, backend, device_index, data, augmentation, bytes); !may) {
    if (e.data.on_device == true) throw Error("data.on_device = true, but " + may.why_not());
    if (!plan.capabilities.host_cpu) log << "data: batches made on the host (" << may.why_not() << ")\n";
    return;
  }
  device.train_on_device = std::make_shared<data::DeviceResident>(data.train, augmentation, device.device);
  device.test_on_device = std::make_shared<data::DeviceResident>(data.test, data::AugmentOptions{}, device.device);
  if (test_is_val)
    device.val_on_device = device.test_on_device;
  else if (data.has_val())
    device.val_on_device = std::make_shared<data::DeviceResident>(data.val, data::AugmentOptions{}, device.device);
  log << "data: on the device (" << format_bytes(std::uint64_t(bytes)) << "): shuffled, gathered"
      << (augmentation.order.empty() ? "" : ", cropped and flipped") << " and normalised there\n";
}

void use_graphs(const RunPlan& plan, BackendHandle& backend, int device_index, TrainerParts& parts,
                std::ostream& log) {
  GraphDecision decision = plan.graphs;
  // The plan read the optimizer table; the optimizer made for this device may still have no
  // fused kernel here ("auto" then steps in the foreach form).
  if (decision.use)
    if (Result<ReplayableOptimizer*> made = replayable(*parts.optimizer); !made) {
      GraphConditions c = plan.graph_conditions;
      c.optimizer_replayable = WhyNot{made.why_not()};
      decision = decide_graphs(c);
    }
  if (decision.mention) log << "device: graphs " << decision.why << "\n";
  if (!decision.use) return;
  parts.graph_fallback = !plan.graph_conditions.setting;  // "auto": a refused recording goes on eagerly
  parts.make_graph_capture = [&backend, device_index]() {
    Result<std::unique_ptr<GraphCapture>> capture = backend.make_graph_capture(device_index);
    if (!capture) throw Error("train.graphs: " + capture.why_not());
    return std::move(capture).value();
  };
}

}  // namespace plugtrain
