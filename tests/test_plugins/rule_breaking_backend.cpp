// A backend ("rulebreaker") on the host CPU that breaks one rule of the SDK on demand, for
// `plugtrain check-backend`: PLUGTRAIN_TEST_BREAK names it.
//   memory   memory() says more is free than there is in total
//   probe    each probe names its device differently (after the process that ran it)
//   plan     capabilities list only single, but plan_multi_device plans ddp as asked, silently
//   loader   loader_config asks for a negative prefetch depth and gives no why
// Unset, it keeps every rule the check can see from outside the tensors.
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "plugtrain/backend.h"

namespace {

bool breaks(const char* rule) {
  const char* which = std::getenv("PLUGTRAIN_TEST_BREAK");
  return which && std::string(which) == rule;
}

constexpr std::uint64_t kTotal = 8ULL << 30;

class RuleBreaking final : public plugtrain::Backend {
 public:
  plugtrain::Capabilities capabilities() const override {
    plugtrain::Capabilities c;
    c.device_type = "cpu";
    c.priority = -20;  // never chosen automatically: tests name it
    c.strategies = {plugtrain::Strategy::single};
    c.collective = "none";
    return c;
  }
  plugtrain::ProbeResult probe() override {
    plugtrain::DeviceInfo d;
    d.name = breaks("probe") ? "the CPU as probed by process " + std::to_string(::getpid()) : "the CPU";
    d.total_memory_bytes = kTotal;
    return plugtrain::ProbeResult{plugtrain::ProbeCode::usable, "usable", {d}, std::nullopt};
  }
  plugtrain::LoaderConfig loader_config(const std::vector<int>&) override {
    plugtrain::LoaderConfig c;
    c.prefetch_depth = breaks("loader") ? -1 : 0;
    c.why = breaks("loader") ? "" : "batches made on the training thread";
    return c;
  }
  plugtrain::MultiDevicePlan plan_multi_device(plugtrain::Strategy strategy, const std::vector<int>&) override {
    plugtrain::MultiDevicePlan p;
    p.devices = {0};
    if (breaks("plan")) {
      p.strategy = strategy;
      p.collective = strategy == plugtrain::Strategy::ddp ? "gloo" : "none";
    } else if (strategy != plugtrain::Strategy::single) {
      p.warnings.push_back("one device, one process: single");
    }
    return p;
  }
  plugtrain::MemoryInfo memory(int) override {
    plugtrain::MemoryInfo m;
    m.total_bytes = kTotal;
    m.free_bytes = breaks("memory") ? 2 * kTotal : kTotal / 2;
    m.note = "made up by the test";
    return m;
  }
};

}  // namespace

PLUGTRAIN_BACKEND_PLUGIN(RuleBreaking, "rulebreaker", "0.0.1", "the host CPU, breaking one rule on demand")
