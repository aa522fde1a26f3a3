#include "diagnose/conformance.h"

#include <algorithm>
#include <chrono>

#include "config/suggest.h"
#include "diagnose/conformance_checks.h"
#include "plugins/cpu_fallbacks.h"
#include "run/plan.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/text.h"

namespace plugtrain {

namespace {

std::vector<std::string> backend_names(PluginHost& host) {
  std::vector<std::string> names;
  for (const BackendHandle& b : host.backends()) names.push_back(b.name());
  return names;
}

}  // namespace

const std::vector<std::string>& conformance_groups() {
  static const std::vector<std::string> groups = {"backend", "transfer", "op", "optimizer", "model", "checkpoint"};
  return groups;
}

const char* to_string(CheckStatus status) {
  switch (status) {
    case CheckStatus::pass:
      return "PASS";
    case CheckStatus::fail:
      return "FAIL";
    case CheckStatus::skip:
      return "SKIP";
  }
  return "FAIL";
}

bool ConformanceReport::ok() const {
  for (const CheckResult& c : checks)
    if (c.status == CheckStatus::fail) return false;
  return true;
}

ConformanceReport check_backend(const ConformanceRequest& request) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::string>& groups = conformance_groups();
  for (const std::string& g : request.groups)
    if (std::find(groups.begin(), groups.end(), g) == groups.end())
      throw Error("check-backend: no group of checks named '" + g + "'" + did_you_mean(g, groups) +
                      "; the groups: " + join(groups),
                  exit_bad_input);
  auto wanted = [&](const std::string& group) {
    return request.groups.empty() ||
           std::find(request.groups.begin(), request.groups.end(), group) != request.groups.end();
  };
  ConformanceTarget t;
  t.search.cli_paths = request.plugin_paths;
  PluginHost host(t.search);
  t.host = &host;
  t.backend = host.backend(request.backend);
  if (!t.backend) {
    const std::vector<std::string> failures = host.load_failures("backend", request.backend);
    if (!failures.empty()) throw Error("check-backend: backend '" + request.backend + "': " + failures.front());
    throw Error("check-backend: no backend named '" + request.backend + "'" +
                    did_you_mean(request.backend, backend_names(host)) +
                    "; known backends: " + join(backend_names(host), ", ", "none") + " (see `plugtrain plugins`)",
                exit_bad_input);
  }
  t.capabilities = t.backend->capabilities();

  // The probe first, before this process computes anything (it forks a child for it).
  const auto probe_start = std::chrono::steady_clock::now();
  t.probe = t.backend->probe();
  t.probe_seconds = seconds_since(probe_start);
  if (!t.probe.usable())
    throw Error("check-backend: backend '" + request.backend + "' is not usable (" + to_string(t.probe.code) +
                "): " + first_line(t.probe.message));
  t.device_index = t.probe.devices.front().index;
  t.device = device_of(t.capabilities.device_type, t.device_index);

  ConformanceReport report;
  report.backend = request.backend;
  report.device = t.device.str();
  report.device_name = t.probe.devices.front().name;
  auto add = [&](std::vector<CheckResult> rows) {
    for (auto& r : rows) report.checks.push_back(std::move(r));
  };
  if (wanted("backend")) add(check_contract(t));
  const std::map<std::string, std::uint64_t> fallbacks_before = t.backend->runtime_counts(true).cpu_fallbacks;
  if (wanted("transfer")) add(check_transfers(t));
  if (wanted("op")) add(check_operators(t));
  if (wanted("optimizer")) add(check_optimizer_kernels(t));
  if (wanted("model")) add(check_models(t, request.all_models));
  if (wanted("checkpoint")) add(check_checkpoint(t));
  report.cpu_fallbacks = fallbacks_between(fallbacks_before, t.backend->runtime_counts(true).cpu_fallbacks);
  report.seconds = seconds_since(start);
  return report;
}

}  // namespace plugtrain
