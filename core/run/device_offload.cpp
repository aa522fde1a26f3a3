#include "run/device_offload.h"

#include <memory>
#include <string>
#include <utility>

#include "data/device_resident.h"
#include "data/from_experiment.h"
#include "train/graph_step.h"
#include "util/error.h"
#include "util/format.h"
#include "util/result.h"

namespace plugtrain {

void place_data(const Experiment& e, const RunPlan& plan, const data::DatasetPair& data, DeviceContext& device,
                std::ostream& log) {
  const DataResidency& decided = plan.data_on_device;
  if (!decided.use) {
    if (!decided.why_not.empty() && !plan.capabilities.host_cpu)
      log << "data: batches made on the host (" << decided.why_not << ")\n";
    return;
  }
  const data::AugmentOptions augmentation = data::augment_options(e.data.augment);
  device.train_on_device = std::make_shared<data::DeviceResident>(data.train, augmentation, device.device);
  device.test_on_device = std::make_shared<data::DeviceResident>(data.test, data::AugmentOptions{}, device.device);
  // A data set without test labels (TinyImageNet) is tested on its val split: one copy serves both.
  if (data.test_is_val)
    device.val_on_device = device.test_on_device;
  else if (data.has_val())
    device.val_on_device = std::make_shared<data::DeviceResident>(data.val, data::AugmentOptions{}, device.device);
  log << "data: on the device (" << format_bytes(std::uint64_t(decided.bytes)) << "): shuffled, gathered"
      << (augmentation.order.empty() ? "" : ", cropped and flipped") << " and normalised there\n";
}

void use_graphs(const RunPlan& plan, TrainerParts& parts, std::ostream& log) {
  const GraphDecision& decision = plan.graphs;
  if (decision.mention) log << "device: graphs " << decision.why << "\n";
  if (!decision.use) return;
  parts.graph_fallback = !plan.graph_conditions.setting;  // "auto": a refused recording goes on eagerly
  BackendHandle& backend = *plan.choice.backend;
  const int device_index = plan.devices.devices.at(0);
  parts.make_graph_capture = [&backend, device_index]() {
    Result<std::unique_ptr<GraphCapture>> capture = backend.make_graph_capture(device_index);
    if (!capture) throw Error("train.graphs: " + capture.why_not());
    return std::move(capture).value();
  };
}

}  // namespace plugtrain
