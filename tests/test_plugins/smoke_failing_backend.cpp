// A backend that probes usable but cannot train ("smokefail"): its device is LibTorch's meta
// device, where tensors have shapes but no values. `plugtrain doctor` must report it as FAIL.
#include "plugtrain/backend.h"

namespace {

class SmokeFailing final : public plugtrain::Backend {
 public:
  void capabilities(plugtrain::CapabilitiesSink& out) const override {
    plugtrain::Capabilities c;
    c.device_type = "meta";
    c.priority = 10;  // before the CPU in automatic order
    plugtrain::report(out, c);
  }
  void probe(plugtrain::ProbeSink& out) override {
    plugtrain::DeviceInfo d;
    d.name = "a device with no values";
    plugtrain::report(out, plugtrain::ProbeResult{plugtrain::ProbeCode::usable, "usable (but it cannot train)", {d}});
  }
  void loader_config(const std::vector<int>&, plugtrain::LoaderSink& out) override {
    plugtrain::report(out, plugtrain::LoaderConfig{});
  }
  void plan_multi_device(plugtrain::Strategy, const std::vector<int>&, plugtrain::PlanSink& out) override {
    plugtrain::MultiDevicePlan p;
    p.devices = {0};
    plugtrain::report(out, p);
  }
  void memory(int, plugtrain::MemorySink& out) override { plugtrain::report(out, plugtrain::MemoryInfo{}); }
};

}  // namespace

PLUGTRAIN_BACKEND_PLUGIN(SmokeFailing, "smokefail", "0.0.1", "usable, but its smoke test fails")
