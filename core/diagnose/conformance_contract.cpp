// The backend's own answers, judged against each other and against the SDK's contracts
// (sdk/include/plugtrain/backend.h, docs/plugins.md): the multi-device plan for each strategy,
// two fresh probes, the memory figures and the peak, the loader settings.
#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "diagnose/conformance_checks.h"
#include "plugins/isolated_probe.h"
#include "util/clock.h"
#include "util/format.h"
#include "util/text.h"

namespace plugtrain {

namespace {

// MultiDevicePlan::collective of a plan that all-reduces nothing (one process).
constexpr const char* kNoCollective = "none";
// The collective LibTorch has itself; any other is the plugin's own export.
constexpr const char* kLibTorchCollective = "gloo";

std::string devices_text(const std::vector<int>& devices) {
  std::vector<std::string> words;
  for (int d : devices) words.push_back(std::to_string(d));
  return "[" + join(words, ",") + "]";
}

std::string strategies_text(const std::vector<Strategy>& strategies) {
  std::vector<std::string> words;
  for (Strategy s : strategies) words.emplace_back(to_string(s));
  return join(words, ", ");
}

CheckResult verdict(const std::vector<std::string>& broken, const std::string& detail) {
  return broken.empty() ? pass(detail) : fail(join(broken, "; "));
}

// What plan_multi_device answers for `strategy` over every probed device.
CheckResult check_plan(ConformanceTarget& t, Strategy strategy) {
  const Capabilities& caps = t.capabilities;
  std::vector<int> probed;
  for (const DeviceInfo& d : t.probe.devices) probed.push_back(d.index);
  const bool listed = std::count(caps.strategies.begin(), caps.strategies.end(), strategy) > 0;
  const MultiDevicePlan plan = t.backend->plan_multi_device({probed, strategy});
  const std::string asked = std::string(to_string(strategy)) + " over " + devices_text(probed);
  const std::string got = std::string(to_string(plan.strategy)) + " over " + devices_text(plan.devices);

  std::vector<std::string> broken;
  if (plan.devices.empty()) broken.push_back("the plan for " + asked + " names no device");
  if (std::set<int>(plan.devices.begin(), plan.devices.end()).size() != plan.devices.size())
    broken.push_back("the plan for " + asked + " names a device twice: " + devices_text(plan.devices));
  for (int d : plan.devices)
    if (std::find(probed.begin(), probed.end(), d) == probed.end())
      broken.push_back("the plan for " + asked + " uses device " + std::to_string(d) +
                       ", which the probe did not list");
  if (plan.devices.size() > probed.size())
    broken.push_back("the plan for " + asked + " promises more devices than asked");
  if (plan.strategy == Strategy::single && plan.devices.size() > 1)
    broken.push_back("a single-device plan over " + std::to_string(plan.devices.size()) + " devices");
  if (std::count(caps.strategies.begin(), caps.strategies.end(), plan.strategy) == 0)
    broken.push_back("plans " + got + ", but capabilities().strategies lists only " + strategies_text(caps.strategies));
  // Over one device, single, dp and ddp are the same run: only fewer devices, or another
  // strategy over several, is a narrowing.
  const bool narrowed = plan.devices.size() < probed.size() || (plan.strategy != strategy && probed.size() > 1);
  if (narrowed && plan.warnings.empty()) broken.push_back("narrowed " + asked + " to " + got + " without a warning");

  if (plan.strategy == Strategy::ddp) {
    if (plan.collective == kNoCollective) broken.push_back("a ddp plan with no collective");
    if (plan.collective != caps.collective && plan.warnings.empty())
      broken.push_back("a ddp plan through '" + plan.collective + "' where capabilities().collective says '" +
                       caps.collective + "', without a warning");
    if (plan.collective != kLibTorchCollective && plan.collective != kNoCollective && !t.backend->collective_factory())
      broken.push_back("a ddp plan through '" + plan.collective +
                       "', but the backend offers no extension \"plugtrain.collective\" (the host would use Gloo)");
  } else if (plan.collective != kNoCollective) {
    broken.push_back("a " + std::string(to_string(plan.strategy)) + " plan (one process) names collective '" +
                     plan.collective + "' instead of \"none\"");
  }
  std::string detail = asked + " -> " + got + ", collective " + plan.collective;
  if (!listed) detail += " (" + std::string(to_string(strategy)) + " is not in capabilities().strategies)";
  if (!plan.warnings.empty()) detail += "; warns: " + first_line(plan.warnings.front());
  return verdict(broken, detail);
}

// What a probe says that must not change between two probes (free memory may).
std::vector<std::string> probe_differences(const ProbeResult& a, const ProbeResult& b) {
  std::vector<std::string> d;
  if (a.code != b.code) d.push_back(std::string("code ") + to_string(a.code) + ", then " + to_string(b.code));
  if (a.devices.size() != b.devices.size())
    d.push_back(std::to_string(a.devices.size()) + " devices, then " + std::to_string(b.devices.size()));
  for (std::size_t i = 0; i < std::min(a.devices.size(), b.devices.size()); ++i) {
    const DeviceInfo &x = a.devices[i], &y = b.devices[i];
    const std::string which = "device " + std::to_string(i);
    if (x.index != y.index)
      d.push_back(which + ": index " + std::to_string(x.index) + ", then " + std::to_string(y.index));
    if (x.name != y.name) d.push_back(which + ": name '" + x.name + "', then '" + y.name + "'");
    if (x.capability != y.capability)
      d.push_back(which + ": capability '" + x.capability + "', then '" + y.capability + "'");
    if (x.total_memory_bytes != y.total_memory_bytes)
      d.push_back(which + ": total memory " + format_bytes(x.total_memory_bytes) + ", then " +
                  format_bytes(y.total_memory_bytes));
  }
  if (a.avoid_in_auto != b.avoid_in_auto) d.push_back("avoid_in_auto changed");
  return d;
}

// Two fresh probes (the host's BackendHandle keeps its first answer): the first made by the
// command's own host, the second by another host that loads the plugins again.
CheckResult check_probe(ConformanceTarget& t) {
  const double limit = probe_time_limit().count() / 1000.0;
  PluginHost second_host(t.search);
  BackendHandle* again = second_host.backend(t.backend->name());
  if (!again) return fail("loading the plugins a second time did not give backend '" + t.backend->name() + "' again");
  const auto start = std::chrono::steady_clock::now();
  const ProbeResult second = again->probe();
  const double second_seconds = seconds_since(start);

  std::vector<std::string> broken;
  for (double s : {t.probe_seconds, second_seconds})
    if (s > limit) broken.push_back("a probe took " + fixed(s, 2) + " s, over its limit of " + fixed(limit, 1) + " s");
  if (!second.usable())
    broken.push_back(std::string("the second probe: ") + to_string(second.code) + ": " + first_line(second.message));
  else if (const auto d = probe_differences(t.probe, second); !d.empty())
    broken.push_back("the second probe answered differently: " + join(d, ", "));
  std::set<int> indices;
  for (const DeviceInfo& d : t.probe.devices) {
    if (!indices.insert(d.index).second) broken.push_back("device index " + std::to_string(d.index) + " listed twice");
    if (d.free_memory_bytes && d.total_memory_bytes && *d.free_memory_bytes > *d.total_memory_bytes)
      broken.push_back("device " + std::to_string(d.index) + ": free memory " + format_bytes(d.free_memory_bytes) +
                       " > total " + format_bytes(d.total_memory_bytes));
  }
  return verdict(broken, "2 fresh probes in " + fixed(t.probe_seconds, 2) + " s and " + fixed(second_seconds, 2) +
                             " s (limit " + fixed(limit, 0) + " s), the same answer: " +
                             std::to_string(t.probe.devices.size()) + " device(s) (free memory not compared)");
}

CheckResult check_memory_figures(ConformanceTarget& t) {
  const MemoryInfo m = t.backend->memory(t.device_index);
  std::vector<std::string> broken;
  if (m.free_bytes && m.total_bytes && *m.free_bytes > *m.total_bytes)
    broken.push_back("free " + format_bytes(m.free_bytes) + " > total " + format_bytes(m.total_bytes));
  if (m.process_used_bytes && m.total_bytes && *m.process_used_bytes > *m.total_bytes)
    broken.push_back("used " + format_bytes(m.process_used_bytes) + " > total " + format_bytes(m.total_bytes));
  if (m.process_used_bytes && m.process_peak_bytes && *m.process_peak_bytes < *m.process_used_bytes)
    broken.push_back("peak " + format_bytes(m.process_peak_bytes) + " < used " + format_bytes(m.process_used_bytes));
  if (!m.free_bytes && m.note.empty()) broken.push_back("free memory is unknown and the note does not say why");
  std::string detail = "total " + format_bytes(m.total_bytes) + ", free " + format_bytes(m.free_bytes) + ", used " +
                       format_bytes(m.process_used_bytes) + ", peak " + format_bytes(m.process_peak_bytes);
  if (!m.note.empty()) detail += " (" + first_line(m.note) + ")";
  return verdict(broken, detail);
}

// The peak rises with a block allocated on the device and falls back once it is freed and a
// new peak is started.
CheckResult check_memory_peak(ConformanceTarget& t) {
  BackendHandle& b = *t.backend;
  const int device = t.device_index;
  if (!b.memory(device).process_peak_bytes) return skip("memory() reports no peak (process_peak_bytes)");
  // A block on the device, every byte written, and the device done with it.
  auto allocate = [&](std::int64_t bytes) {
    at::Tensor block = at::empty({bytes}, at::TensorOptions().dtype(at::kByte).device(t.device));
    block.fill_(1);
    (void)block[bytes - 1].item<std::uint8_t>();  // reading a byte back waits for the fill
    return block;
  };
  (void)allocate(4096);  // once small, so the first use of these kernels does not count as the block
  if (!b.reset_peak_memory(device))
    return skip("reset_peak_memory says this backend cannot start a new peak (its peak covers the whole process)");
  const MemoryInfo before = b.memory(device);
  std::int64_t block_bytes = 64 << 20;
  if (before.total_bytes) block_bytes = std::min<std::int64_t>(block_bytes, std::int64_t(*before.total_bytes / 8));
  if (before.free_bytes) block_bytes = std::min<std::int64_t>(block_bytes, std::int64_t(*before.free_bytes / 4));
  block_bytes = std::max<std::int64_t>(block_bytes, 1 << 20);
  MemoryInfo during;
  {
    const at::Tensor block = allocate(block_bytes);
    during = b.memory(device);
  }
  const bool reset_again = b.reset_peak_memory(device);
  const MemoryInfo after = b.memory(device);
  if (!during.process_peak_bytes || !after.process_peak_bytes)
    return fail("memory() stopped reporting a peak after reset_peak_memory");
  const std::uint64_t p0 = *before.process_peak_bytes, p1 = *during.process_peak_bytes, p2 = *after.process_peak_bytes;
  const std::uint64_t half = std::uint64_t(block_bytes) / 2;
  const std::string figures = "peak " + format_bytes(p0) + " -> " + format_bytes(p1) + " with a " +
                              format_bytes(std::uint64_t(block_bytes)) + " block -> " + format_bytes(p2) +
                              " after it was freed and reset_peak_memory";
  if (p1 < p0 + half) return fail("the peak did not rise with the block: " + figures);
  if (!reset_again) return fail("reset_peak_memory said yes, then no: " + figures);
  if (p2 + half > p1) return fail("the peak did not fall back: " + figures);
  return pass(figures);
}

CheckResult check_loader(ConformanceTarget& t) {
  const LoaderConfig c = t.backend->loader_config({t.device_index});
  std::vector<std::string> broken;
  if (c.workers < 0) broken.push_back("workers " + std::to_string(c.workers) + " < 0");
  if (c.prefetch_depth < 0) broken.push_back("prefetch_depth " + std::to_string(c.prefetch_depth) + " < 0");
  if (c.workers > 0 && c.prefetch_depth < 1)
    broken.push_back(std::to_string(c.workers) + " workers with nothing to prefetch (prefetch_depth " +
                     std::to_string(c.prefetch_depth) + ")");
  if (c.why.empty()) broken.push_back("no why");
  if (c.why.find('\n') != std::string::npos) broken.push_back("the why is more than one line");
  if (c.pin_memory) {
    if (t.device.is_cpu() || t.capabilities.host_cpu) {
      broken.push_back("pin_memory on for the host CPU, where nothing is copied to a device");
    } else {
      try {  // as the loader pins a batch (data/batch_maker.cpp)
        if (!at::ones({64}).pin_memory().is_pinned())
          broken.push_back("pin_memory on, but a pinned tensor is not pinned");
      } catch (const std::exception& e) {
        broken.push_back("pin_memory on, but host memory cannot be pinned for the device: " + first_line(e.what()));
      }
    }
  }
  std::string detail = "workers " + std::to_string(c.workers) + ", prefetch " + std::to_string(c.prefetch_depth) +
                       ", pin_memory " + (c.pin_memory ? "on" : "off") + ", non_blocking " +
                       (c.non_blocking ? "on" : "off") + ": " + c.why;
  if (c.non_blocking && !c.pin_memory) detail += " (non_blocking without pinned memory copies synchronously)";
  return verdict(broken, detail);
}

}  // namespace

std::vector<CheckResult> check_contract(ConformanceTarget& t) {
  std::vector<CheckResult> rows;
  rows.push_back(run_check("backend", "probe", [&] { return check_probe(t); }));
  for (Strategy s : {Strategy::single, Strategy::dp, Strategy::ddp})
    rows.push_back(run_check("backend", std::string("plan ") + to_string(s), [&] { return check_plan(t, s); }));
  rows.push_back(run_check("backend", "loader settings", [&] { return check_loader(t); }));
  rows.push_back(run_check("backend", "memory figures", [&] { return check_memory_figures(t); }));
  rows.push_back(run_check("backend", "memory peak", [&] { return check_memory_peak(t); }));
  return rows;
}

}  // namespace plugtrain
