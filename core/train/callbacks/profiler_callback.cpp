#include "train/callbacks/profiler_callback.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cxxabi.h>
#include <map>
#include <ostream>
#include <set>
#include <unordered_map>

#include <torch/csrc/autograd/profiler_kineto.h>

#include "util/error.h"
#include "util/format.h"
#include "util/text.h"

namespace plugtrain {

namespace prof = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;

namespace {

struct OpFigures {
  std::int64_t calls = 0, launches = 0;
  double cpu_self_ns = 0, device_ns = 0;
  std::int64_t cpu_bytes = 0;
};

// Self time of CPU operators: an operator's time less that of the operators it called (the
// events of one thread nest).
std::map<std::string, OpFigures> summarise(const std::vector<prof::KinetoEvent>& events) {
  std::map<std::string, OpFigures> ops;
  std::unordered_map<std::uint64_t, std::vector<const prof::KinetoEvent*>> by_thread;
  for (const auto& e : events) {
    if (e.deviceType() == c10::DeviceType::CPU) {
      if (e.name() == "[memory]") continue;
      by_thread[e.startThreadId()].push_back(&e);
    } else if (e.durationNs() > 0) {
      OpFigures& f = ops[e.name()];
      f.device_ns += double(e.durationNs());  // kernels do not nest
      ++f.launches;
    }
  }
  for (auto& [thread, list] : by_thread) {
    std::sort(list.begin(), list.end(), [](auto* a, auto* b) {
      return a->startNs() != b->startNs() ? a->startNs() < b->startNs() : a->endNs() > b->endNs();
    });
    std::vector<const prof::KinetoEvent*> open;
    for (const auto* e : list) {
      while (!open.empty() && open.back()->endNs() <= e->startNs()) open.pop_back();
      OpFigures& f = ops[e->name()];
      ++f.calls;
      f.cpu_self_ns += double(e->durationNs());
      if (!open.empty()) ops[open.back()->name()].cpu_self_ns -= double(e->durationNs());
      open.push_back(e);
    }
  }
  // Memory: each allocation event belongs to the operator open on its thread at that moment;
  // its size is attributed by name through the event's own record (nBytes > 0 are allocations).
  for (const auto& e : events)
    if (e.name() == "[memory]" && e.nBytes() > 0) ops["[memory]"].cpu_bytes += e.nBytes();
  return ops;
}

void print_top(std::ostream& log, const std::map<std::string, OpFigures>& ops, bool device, std::size_t n) {
  std::vector<std::pair<std::string, OpFigures>> rows(ops.begin(), ops.end());
  rows.erase(std::remove_if(rows.begin(), rows.end(),
                            [&](const auto& r) { return r.first == "[memory]" || (device ? r.second.device_ns : r.second.cpu_self_ns) <= 0; }),
             rows.end());
  std::sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) {
    return device ? a.second.device_ns > b.second.device_ns : a.second.cpu_self_ns > b.second.cpu_self_ns;
  });
  double total = 0;
  for (const auto& r : rows) total += device ? r.second.device_ns : r.second.cpu_self_ns;
  if (rows.empty()) return;
  log << "profile: top operators by " << (device ? "device time" : "self CPU time") << "\n";
  for (std::size_t i = 0; i < std::min(n, rows.size()); ++i) {
    const double ns = device ? rows[i].second.device_ns : rows[i].second.cpu_self_ns;
    const std::string name = device ? short_kernel_name(rows[i].first) : rows[i].first;
    const std::int64_t count = device ? rows[i].second.launches : rows[i].second.calls;
    char line[256];
    std::snprintf(line, sizeof line, "  %-48.48s %8.2f ms %5.1f%%  %6lld %s\n", name.c_str(), ns / 1e6,
                  total > 0 ? 100 * ns / total : 0.0, static_cast<long long>(count), device ? "runs" : "calls");
    log << line;
  }
}

}  // namespace

std::string short_kernel_name(const std::string& name) {
  std::string text = name;
  if (text.rfind("_Z", 0) == 0) {  // a mangled name (cuDNN's CUTLASS kernels): demangle it first
    int status = 0;
    char* demangled = abi::__cxa_demangle(text.c_str(), nullptr, nullptr, &status);
    if (status == 0 && demangled != nullptr) text = demangled;
    std::free(demangled);
  }
  if (text.rfind("void ", 0) == 0) text.erase(0, 5);
  // The name alone: no template arguments, no parameter list (they fill the line and the
  // trace keeps them).
  std::string out;
  int depth = 0;
  for (char c : text) {
    const bool after_name = !out.empty() && (std::isalnum(static_cast<unsigned char>(out.back())) || out.back() == '_');
    if (c == '(' && depth == 0 && after_name) break;  // the parameter list, not "(anonymous namespace)"
    if (c == '<') ++depth;
    if (depth == 0) out += c;
    if (c == '>' && depth > 0) --depth;
  }
  for (const std::string noise : {"(anonymous namespace)::", "at::native::"}) {
    for (auto at = out.find(noise); at != std::string::npos; at = out.find(noise)) out.erase(at, noise.size());
  }
  return out.empty() ? name : out;
}

ProfilerCallback::ProfilerCallback(std::filesystem::path folder, std::int64_t warmup, std::int64_t steps,
                                   std::string device_activity, std::ostream& log)
    : folder_(std::move(folder)), warmup_(warmup), steps_(steps), device_activity_(std::move(device_activity)), log_(log) {}

ProfilerCallback::~ProfilerCallback() {
  if (active_) {
    // A run that failed mid-recording: the profile is not wanted, only the profiler off. A
    // destructor must not throw, and a profiler that refuses to stop has nothing to give.
    try {
      prof::disableProfiler();
    } catch (const std::exception& e) {
      log_ << "profiler: could not stop it after the run failed: " << first_line(e.what()) << "\n";
    }
  }
}

void ProfilerCallback::start() {
  std::set<ActivityType> activities{ActivityType::CPU};
  // The device's activity by the name its plugin gives (LibTorch's own names).
  for (int a = 1; a < static_cast<int>(ActivityType::NUM_KINETO_ACTIVITIES); ++a) {
    std::string name = torch::profiler::impl::actToString(ActivityType(a));
    std::transform(name.begin(), name.end(), name.begin(), ::tolower);
    if (!device_activity_.empty() && name == device_activity_) activities.insert(ActivityType(a));
  }
  const torch::profiler::impl::ProfilerConfig config(torch::profiler::impl::ProfilerState::KINETO,
                                                    /*report_input_shapes=*/false, /*profile_memory=*/true);
  prof::prepareProfiler(config, activities);
  prof::enableProfiler(config, activities);
  active_ = true;
  log_ << "profile: recording " << steps_ << " steps\n";
}

void ProfilerCallback::stop() {
  if (!active_) return;
  active_ = false;
  done_ = true;
  std::unique_ptr<prof::ProfilerResult> result = prof::disableProfiler();
  std::filesystem::create_directories(folder_);
  const std::filesystem::path trace = folder_ / "trace.json";
  result->save(trace.string());
  const auto ops = summarise(result->events());
  print_top(log_, ops, /*device=*/false, 10);
  print_top(log_, ops, /*device=*/true, 10);
  const auto memory = ops.find("[memory]");
  if (memory != ops.end())
    log_ << "profile: " << format_bytes(std::uint64_t(memory->second.cpu_bytes)) << " allocated over " << profiled_
         << " steps\n";
  log_ << "profile: " << profiled_ << " steps in " << trace.string() << " (Perfetto, chrome://tracing)\n";
}

void ProfilerCallback::on_train_start(LoopState&) {
  if (warmup_ == 0) start();
}

void ProfilerCallback::on_step_end(const LoopState&, const at::Tensor&) {
  if (done_) return;
  if (active_) {
    if (++profiled_ >= steps_) stop();
  } else if (++seen_ >= warmup_) {
    start();
  }
}

void ProfilerCallback::on_train_end(LoopState&) { stop(); }

}  // namespace plugtrain
