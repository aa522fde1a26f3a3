// Stands in for a GPU whose backend records device graphs, so the host's graph
// path can be tested on any machine: trains on the CPU device, says it is an accelerator, and
// its "graph" keeps the recorded work and runs it again on every replay (a real graph runs the
// recorded kernels without the host code; the host's step treats both alike).
// PLUGTRAIN_TEST_GRAPH_REFUSE=1: every capture fails as a device refusing one would.
#include <cstdlib>
#include <stdexcept>

#include "plugtrain/backend.h"

namespace {

class RerunningGraph final : public plugtrain::GraphCapture {
 public:
  void warm_up(const std::function<void()>& work) override { work(); }
  void capture(const std::function<void()>& work) override {
    if (const char* refuse = std::getenv("PLUGTRAIN_TEST_GRAPH_REFUSE"); refuse && *refuse == '1')
      throw std::runtime_error("operation not permitted when stream is capturing (test refusal)");
    recorded_ = work;
  }
  void replay() override {
    if (!recorded_) throw std::runtime_error("replay before capture");
    recorded_();
  }

 private:
  std::function<void()> recorded_;
};

class GraphRecorderBackend final : public plugtrain::Backend {
 public:
  plugtrain::Capabilities capabilities() const override {
    plugtrain::Capabilities c;
    c.device_type = "cpu";
    c.priority = 50;
    c.strategies = {plugtrain::Strategy::single, plugtrain::Strategy::ddp};  // ddp: processes on the CPU, Gloo
    c.collective = "gloo";
    return c;
  }
  plugtrain::ProbeResult probe() override {
    plugtrain::DeviceInfo d;
    d.name = "graph-recording test device";
    d.total_memory_bytes = 8ull << 30;
    plugtrain::DeviceInfo second = d;  // two, for ddp (both the CPU)
    second.index = 1;
    return plugtrain::ProbeResult{plugtrain::ProbeCode::usable, "always usable", {d, second}};
  }
  plugtrain::LoaderConfig loader_config(const std::vector<int>&) override { return plugtrain::LoaderConfig{}; }
  plugtrain::MultiDevicePlan plan_multi_device(plugtrain::Strategy strategy, const std::vector<int>& devices) override {
    plugtrain::MultiDevicePlan p;
    if (strategy == plugtrain::Strategy::ddp) {  // each rank asks for its own one
      p.strategy = plugtrain::Strategy::ddp;
      p.devices = devices;
      p.collective = "gloo";
    } else {
      p.devices = {0};
    }
    return p;
  }
  plugtrain::MemoryInfo memory(int) override {
    plugtrain::MemoryInfo m;
    m.total_bytes = 8ull << 30;
    m.free_bytes = 6ull << 30;
    return m;
  }
  std::unique_ptr<plugtrain::GraphCapture> make_graph_capture(int, std::string&) override {
    return std::make_unique<RerunningGraph>();
  }
};

}  // namespace

PLUGTRAIN_BACKEND_PLUGIN(GraphRecorderBackend, "graphrec", "1.0.0", "test accelerator that records graphs by rerunning")
