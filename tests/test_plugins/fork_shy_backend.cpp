// "forkshy": a backend whose device runtime follows CUDA's rule about fork(): once a process has
// started it (here: the first memory() call, as the first tensor on a GPU does), a forked copy of
// that process cannot start it again, and its probe there fails as cuInit does ("initialization
// error"). The probe itself starts the runtime in the process it runs in, as CUDA's does.
#include <unistd.h>

#include "plugtrain/backend.h"

namespace {

pid_t started_in = 0;  // the process that started the runtime; copied into forked children

bool start_runtime() {
  if (started_in != 0 && started_in != ::getpid()) return false;
  started_in = ::getpid();
  return true;
}

class ForkShyBackend final : public plugtrain::Backend {
 public:
  void capabilities(plugtrain::CapabilitiesSink& out) const override {
    plugtrain::report(out, plugtrain::Capabilities{"cpu"});
  }
  void probe(plugtrain::ProbeSink& out) override { plugtrain::report(out, probe_result()); }
  static plugtrain::ProbeResult probe_result() {
    if (!start_runtime()) return {plugtrain::ProbeCode::no_driver, "runtime start failed: initialization error", {}};
    plugtrain::DeviceInfo d;
    d.name = "a device that cannot start in a fork";
    return {plugtrain::ProbeCode::usable, "usable", {d}};
  }
  void loader_config(const std::vector<int>&, plugtrain::LoaderSink& out) override {
    plugtrain::report(out, plugtrain::LoaderConfig{});
  }
  void plan_multi_device(plugtrain::Strategy, const std::vector<int>&, plugtrain::PlanSink& out) override {
    plugtrain::report(out, plugtrain::MultiDevicePlan{});
  }
  void memory(int, plugtrain::MemorySink& out) override {
    start_runtime();
    plugtrain::report(out, plugtrain::MemoryInfo{});
  }
};

}  // namespace

PLUGTRAIN_BACKEND_PLUGIN(ForkShyBackend, "forkshy", "0.0.1",
                         "a backend whose runtime cannot start in a fork of a process that started it")
