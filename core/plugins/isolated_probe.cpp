#include "plugins/isolated_probe.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "util/fatal_signals.h"

namespace plugtrain {

namespace {

using Clock = std::chrono::steady_clock;

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



std::string signal_text(int sig) {
  const char* name = sigabbrev_np(sig);
  return "signal " + std::to_string(sig) + (name ? std::string(" (SIG") + name + ")" : std::string());
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
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return probe();  // no isolation to be had: probe here
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return probe();
  }
  if (child == 0) {
    ::close(pipe_fds[0]);
    default_fatal_signals();  // the parent says "the probe crashed: signal N", once
    const std::string answer = to_json(probe()).dump();
    std::size_t sent = 0;
    while (sent < answer.size()) {
      const ssize_t n = ::write(pipe_fds[1], answer.data() + sent, answer.size() - sent);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) ::_exit(3);
      sent += std::size_t(n);
    }
    ::_exit(0);  // no destructors or atexit handlers of the parent's state
  }
  ::close(pipe_fds[1]);
  auto failed = [&](const std::string& why) {
    return ProbeResult{ProbeCode::error, "plugin '" + plugin + "': " + why, {}, std::nullopt};
  };
  std::string answer;
  const auto deadline = Clock::now() + limit;
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd fd{pipe_fds[0], POLLIN, 0};
    const int ready = ::poll(&fd, 1, int(std::min<long long>(left, 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(pipe_fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the child closed the pipe: its answer is complete
    answer.append(buf, std::size_t(n));
  }
  ::close(pipe_fds[0]);
  if (timed_out) ::kill(child, SIGKILL);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out)
    return failed("the probe did not answer within " + std::to_string(limit.count() / 1000.0).substr(0, 4) +
                  " s (it hangs; PLUGTRAIN_PROBE_TIMEOUT sets the limit)");
  if (WIFSIGNALED(status)) return failed("the probe crashed: " + signal_text(WTERMSIG(status)));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || answer.empty())
    return failed("the probe ended without an answer (exit " + std::to_string(WEXITSTATUS(status)) + ")");
  try {
    return from_json(nlohmann::json::parse(answer));
  } catch (const std::exception& e) {
    return failed(std::string("the probe's answer could not be read: ") + e.what());
  }
#endif
}

}  // namespace plugtrain
