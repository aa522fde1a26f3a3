#include "plugins/isolated_probe.h"

#include <signal.h>

#include <cstdlib>
#include <mutex>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "util/fatal_signals.h"
#include "util/subprocess.h"

namespace plugtrain {

namespace {

nlohmann::json to_json(const ProbeResult& r) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& d : r.devices) {
    nlohmann::json j = {{"index", d.index}, {"name", d.name}, {"capability", d.capability}, {"details", d.details}};
    if (d.total_memory_bytes) j["total_memory_bytes"] = *d.total_memory_bytes;
    if (d.free_memory_bytes) j["free_memory_bytes"] = *d.free_memory_bytes;
    devices.push_back(j);
  }
  nlohmann::json j = {{"code", int(r.code)}, {"message", r.message}, {"devices", devices}};
  if (r.avoid_in_auto) j["avoid_in_auto"] = *r.avoid_in_auto;
  return j;
}

ProbeResult from_json(const nlohmann::json& j) {
  ProbeResult r;
  r.code = ProbeCode(j.at("code").get<int>());
  r.message = j.at("message").get<std::string>();
  for (const auto& d : j.at("devices")) {
    DeviceInfo info;
    info.index = d.at("index").get<int>();
    info.name = d.at("name").get<std::string>();
    info.capability = d.at("capability").get<std::string>();
    info.details = d.at("details").get<std::map<std::string, std::string>>();
    if (d.contains("total_memory_bytes")) info.total_memory_bytes = d["total_memory_bytes"].get<std::uint64_t>();
    if (d.contains("free_memory_bytes")) info.free_memory_bytes = d["free_memory_bytes"].get<std::uint64_t>();
    r.devices.push_back(std::move(info));
  }
  if (j.contains("avoid_in_auto")) r.avoid_in_auto = j["avoid_in_auto"].get<std::string>();
  return r;
}

}  // namespace

std::chrono::milliseconds probe_time_limit() {
  const char* text = std::getenv("PLUGTRAIN_PROBE_TIMEOUT");
  const double seconds = text && *text ? std::atof(text) : 30.0;
  return std::chrono::milliseconds(static_cast<std::int64_t>((seconds > 0 ? seconds : 30.0) * 1000));
}

ProbeResult probe_in_child(const std::string& plugin, const std::function<ProbeResult()>& probe,
                           std::chrono::milliseconds limit) {
#if defined(__APPLE__)
  (void)plugin;
  (void)limit;
  return probe();
#else
  Result<ChildProcess> started = run_in_child([&](int to_parent) {
    default_fatal_signals();  // the parent says "the probe crashed: signal N", once
    return write_all(to_parent, to_json(probe()).dump()) ? 0 : 3;
  });
  if (!started) return probe();  // no isolation to be had: probe here
  ChildProcess& child = started.value();
  auto failed = [&](const std::string& why) {
    return ProbeResult{ProbeCode::error, "plugin '" + plugin + "': " + why, {}, std::nullopt};
  };
  const ReadUntilClosed answer = read_until_closed(child.from_child.get(), std::chrono::steady_clock::now() + limit);
  child.from_child.reset();
  if (answer.timed_out) send_signal(child.pid, SIGKILL);
  const ExitStatus status = wait_for(child.pid);
  if (answer.timed_out)
    return failed("the probe did not answer within " + std::to_string(limit.count() / 1000.0).substr(0, 4) +
                  " s (it hangs; PLUGTRAIN_PROBE_TIMEOUT sets the limit)");
  if (status.signal) return failed("the probe crashed: " + signal_text(status.signal));
  if (status.exit_code != 0 || answer.text.empty())
    return failed("the probe ended without an answer (exit " + std::to_string(status.exit_code) + ")");
  try {
    return from_json(nlohmann::json::parse(answer.text));
  } catch (const std::exception& e) {
    return failed(std::string("the probe's answer could not be read: ") + e.what());
  }
#endif
}

namespace {

struct StartedRuntimes {
  std::mutex mutex;
  std::set<std::string> files;
};
StartedRuntimes& started_runtimes() {
  static StartedRuntimes started;
  return started;
}

}  // namespace

void note_runtime_started(const std::string& file) {
  if (file.empty()) return;
  StartedRuntimes& started = started_runtimes();
  const std::lock_guard<std::mutex> lock(started.mutex);
  started.files.insert(file);
}

ProbeResult probe_isolated(const std::string& plugin, const std::string& file,
                           const std::function<ProbeResult()>& probe, std::chrono::milliseconds limit) {
  bool here = false;
  if (!file.empty()) {
    StartedRuntimes& started = started_runtimes();
    const std::lock_guard<std::mutex> lock(started.mutex);
    here = started.files.count(file) > 0;
  }
  return here ? probe() : probe_in_child(plugin, probe, limit);
}

}  // namespace plugtrain
