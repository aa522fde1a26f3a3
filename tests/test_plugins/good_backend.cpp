// A well-behaved test backend ("testgood") with one fake device.
#include "plugtrain/backend.h"

namespace {

class GoodBackend final : public plugtrain::Backend {
 public:
  void capabilities(plugtrain::CapabilitiesSink& out) const override {
    plugtrain::report(out, plugtrain::Capabilities{"cpu"});
  }
  void probe(plugtrain::ProbeSink& out) override {
    plugtrain::DeviceInfo d;
    d.name = "test device";
    d.total_memory_bytes = 1024;
    plugtrain::report(out, plugtrain::ProbeResult{plugtrain::ProbeCode::usable, "always usable", {d}});
  }
  void loader_config(const std::vector<int>&, plugtrain::LoaderSink& out) override {
    plugtrain::report(out, plugtrain::LoaderConfig{});
  }
  void plan_multi_device(plugtrain::Strategy, const std::vector<int>&, plugtrain::PlanSink& out) override {
    plugtrain::report(out, plugtrain::MultiDevicePlan{});
  }
  void memory(int, plugtrain::MemorySink&) override { throw std::runtime_error("memory gauge broken"); }
};

}  // namespace

#ifdef TEST_ABI_MINOR  // the same plugin as built with another SDK minor
#undef PLUGTRAIN_SDK_ABI_MINOR
#define PLUGTRAIN_SDK_ABI_MINOR TEST_ABI_MINOR
#endif
#ifdef TEST_HANDSHAKE  // the handshake is handshake_sizes.cpp's, of another length than today's
#undef PLUGTRAIN_PLUGIN_INFO
#define PLUGTRAIN_PLUGIN_INFO(KINDS, NAME, VERSION, DESCRIPTION)
#endif
#ifndef TEST_PLUGIN_NAME
#define TEST_PLUGIN_NAME "testgood"
#endif
PLUGTRAIN_BACKEND_PLUGIN(GoodBackend, TEST_PLUGIN_NAME, "1.2.3", "test backend that always works")
