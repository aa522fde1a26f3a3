// A backend whose probe throws: the host must list it as unusable, naming the plugin.
#include <stdexcept>

#include "plugtrain/backend.h"

namespace {

class ThrowingBackend final : public plugtrain::Backend {
 public:
  void capabilities(plugtrain::CapabilitiesSink& out) const override {
    plugtrain::report(out, plugtrain::Capabilities{"cpu"});
  }
  void probe(plugtrain::ProbeSink&) override { throw std::runtime_error("sensor exploded"); }
  void loader_config(const std::vector<int>&, plugtrain::LoaderSink& out) override {
    plugtrain::report(out, plugtrain::LoaderConfig{});
  }
  void plan_multi_device(plugtrain::Strategy, const std::vector<int>&, plugtrain::PlanSink& out) override {
    plugtrain::report(out, plugtrain::MultiDevicePlan{});
  }
  void memory(int, plugtrain::MemorySink& out) override { plugtrain::report(out, plugtrain::MemoryInfo{}); }
};

}  // namespace

PLUGTRAIN_BACKEND_PLUGIN(ThrowingBackend, "throwprobe", "0.0.1", "probe always throws")
