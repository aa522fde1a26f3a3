// Stands in for MPS on an Apple M2 so selection policy can be tested on Linux: usable, but
// asks automatic selection to pass it over. Trains on the CPU device.
#include "plugtrain/backend.h"

namespace {

class FakeMps final : public plugtrain::Backend {
 public:
  void capabilities(plugtrain::CapabilitiesSink& out) const override {
    plugtrain::Capabilities c;
    c.device_type = "cpu";  // trains on the CPU device, but stands for a GPU
    c.priority = 100;
    plugtrain::report(out, c);
  }
  void probe(plugtrain::ProbeSink& out) override {
    plugtrain::DeviceInfo d;
    d.name = "Apple M2 GPU (fake)";
    plugtrain::ProbeResult r{plugtrain::ProbeCode::usable, "Metal GPU of Apple M2 (fake)", {d}};
    r.avoid_in_auto = "on Apple M2 the CPU is often faster than MPS for small models";
    plugtrain::report(out, r);
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

PLUGTRAIN_BACKEND_PLUGIN(FakeMps, "mps", "9.9.9", "fake MPS on an M2 for selection tests")
