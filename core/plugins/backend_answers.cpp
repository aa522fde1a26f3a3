#include "plugins/backend_answers.h"

#include <algorithm>

namespace plugtrain {

namespace {

class CapabilitiesInto final : public CapabilitiesSink {
 public:
  explicit CapabilitiesInto(Capabilities& c) : c_(c) {}
  void device_type(const std::string& type) override { c_.device_type = type; }
  void host_cpu(bool is_host_cpu) override { c_.host_cpu = is_host_cpu; }
  void float64(bool computes_float64) override { c_.float64 = computes_float64; }
  void priority(int value) override { c_.priority = value; }
  void strategies(const std::vector<Strategy>& possible) override { c_.strategies = possible; }
  void collective(const std::string& name) override { c_.collective = name; }
  void visible_devices_variable(const std::string& variable) override { c_.visible_devices_variable = variable; }
  void profiler_activity(const std::string& activity) override { c_.profiler_activity = activity; }

 private:
  Capabilities& c_;
};

class ProbeInto final : public ProbeSink {
 public:
  explicit ProbeInto(ProbeResult& p) : p_(p) {}
  void result(ProbeCode code, const std::string& message) override {
    p_.code = code;
    p_.message = message;
  }
  void device(int index, const std::string& name, const std::string& capability) override {
    DeviceInfo& d = at(index);
    d.name = name;
    d.capability = capability;
  }
  void device_memory(int index, std::optional<std::uint64_t> total, std::optional<std::uint64_t> free) override {
    DeviceInfo& d = at(index);
    d.total_memory_bytes = total;
    d.free_memory_bytes = free;
  }
  void device_detail(int index, const std::string& key, const std::string& value) override { at(index).details[key] = value; }
  void avoid_in_auto(const std::string& why) override { p_.avoid_in_auto = why; }

 private:
  // Devices in the order first named; a later call about the same index adds to it.
  DeviceInfo& at(int index) {
    auto it = std::find_if(p_.devices.begin(), p_.devices.end(), [&](const DeviceInfo& d) { return d.index == index; });
    if (it != p_.devices.end()) return *it;
    DeviceInfo& d = p_.devices.emplace_back();
    d.index = index;
    return d;
  }
  ProbeResult& p_;
};

class LoaderInto final : public LoaderSink {
 public:
  explicit LoaderInto(LoaderConfig& l) : l_(l) {}
  void loader(int workers, bool pin_memory, bool non_blocking, int prefetch_depth, const std::string& why) override {
    l_ = LoaderConfig{workers, pin_memory, non_blocking, prefetch_depth, why};
  }

 private:
  LoaderConfig& l_;
};

class PlanInto final : public PlanSink {
 public:
  explicit PlanInto(MultiDevicePlan& p) : p_(p) {}
  void plan(Strategy strategy, const std::vector<int>& devices, const std::string& collective) override {
    p_.strategy = strategy;
    p_.devices = devices;
    p_.collective = collective;
  }
  void warning(const std::string& line) override { p_.warnings.push_back(line); }

 private:
  MultiDevicePlan& p_;
};

class MemoryInto final : public MemorySink {
 public:
  explicit MemoryInto(MemoryInfo& m) : m_(m) {}
  void memory(std::optional<std::uint64_t> total, std::optional<std::uint64_t> free) override {
    m_.total_bytes = total;
    m_.free_bytes = free;
  }
  void process(std::optional<std::uint64_t> used, std::optional<std::uint64_t> peak, std::optional<std::uint64_t> reserved,
               std::optional<std::uint64_t> oom_events) override {
    m_.process_used_bytes = used;
    m_.process_peak_bytes = peak;
    m_.reserved_bytes = reserved;
    m_.oom_events = oom_events;
  }
  void note(const std::string& line) override { m_.note = m_.note.empty() ? line : m_.note + "; " + line; }

 private:
  MemoryInfo& m_;
};

}  // namespace

Capabilities capabilities_of(const Backend& backend) {
  Capabilities c;
  CapabilitiesInto sink(c);
  backend.capabilities(sink);
  return c;
}

ProbeResult probe_of(Backend& backend) {
  ProbeResult p;
  ProbeInto sink(p);
  backend.probe(sink);
  return p;
}

LoaderConfig loader_config_of(Backend& backend, const std::vector<int>& devices) {
  LoaderConfig l;
  LoaderInto sink(l);
  backend.loader_config(devices, sink);
  return l;
}

MultiDevicePlan plan_of(Backend& backend, Strategy strategy, const std::vector<int>& devices) {
  MultiDevicePlan p;
  PlanInto sink(p);
  backend.plan_multi_device(strategy, devices, sink);
  return p;
}

MemoryInfo memory_of(Backend& backend, int device) {
  MemoryInfo m;
  MemoryInto sink(m);
  backend.memory(device, sink);
  return m;
}

}  // namespace plugtrain
