#include "select/backend_selection.h"

#include <algorithm>
#include <limits>

#include "config/suggest.h"
#include "util/error.h"
#include "util/result.h"
#include "util/text.h"

namespace plugtrain {

namespace {

bool listed(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

// Whether `backend` may be chosen at all (the experiment or the command line may rule it out).
Status allowed(BackendHandle& backend, const Experiment& e, const SelectionLimits& limits) {
  if (listed(e.backend.disable, backend.name()) || listed(limits.disable, backend.name())) return WhyNot{"disabled"};
  if (limits.host_cpu_only) {
    try {
      if (!backend.capabilities().host_cpu) return WhyNot{"disabled (no GPU asked for)"};
    } catch (const std::exception& error) {
      return WhyNot{error.what()};
    }
  }
  return Status::fine();
}

std::string probe_reason(const ProbeResult& p) { return std::string(to_string(p.code)) + ": " + p.message; }

std::vector<std::string> backend_names(PluginHost& host) {
  std::vector<std::string> names;
  for (auto& b : host.backends()) names.push_back(b.name());
  return names;
}

int priority_of(BackendHandle& backend) {
  try {
    return backend.capabilities().priority;
  } catch (const std::exception&) {
    return std::numeric_limits<int>::min();  // a plugin that cannot say comes last
  }
}

}  // namespace

std::vector<std::string> automatic_order(PluginHost& host, const Experiment& e) {
  if (!e.backend.prefer.empty()) return e.backend.prefer;
  std::vector<std::pair<int, std::string>> ranked;
  for (auto& b : host.backends()) ranked.emplace_back(-priority_of(b), b.name());
  std::sort(ranked.begin(), ranked.end());
  std::vector<std::string> order;
  for (const auto& r : ranked) order.push_back(r.second);
  return order;
}

BackendChoice select_backend(PluginHost& host, const Experiment& e, const SelectionLimits& limits) {
  BackendChoice choice;
  // `run --no-<name>` names a backend by what its plugin calls it: one no plugin gives is a typo.
  for (const std::string& off : limits.disable)
    if (!host.backend(off) && host.load_failures("backend", off).empty())
      throw Error("--no-" + off + ": no backend is named '" + off + "'" + did_you_mean(off, backend_names(host)) +
                      "; loaded: " + join(backend_names(host), ", ", "none") + " (see `plugtrain plugins`)",
                  exit_bad_input);
  if (e.backend.name) {
    const std::string& named = *e.backend.name;
    BackendHandle* b = host.backend(named);
    if (!b) {
      const std::vector<std::string> failures = host.load_failures("backend", named);
      if (!failures.empty()) throw Error("backend '" + named + "': " + failures.front());
      throw Error("backend '" + named + "' is not among the loaded backend plugins" +
                  did_you_mean(named, backend_names(host)) + "; loaded: " + join(backend_names(host), ", ", "none") +
                  " (see `plugtrain plugins`)");
    }
    if (const Status may = allowed(*b, e, limits); !may)
      throw Error("backend '" + named + "' is named in [backend] name but also " + may.why_not());
    const ProbeResult& probe = b->probe();
    if (!probe.usable()) throw Error("backend '" + named + "' is unusable: " + probe_reason(probe));
    choice.backend = b;
    choice.reasons.push_back("chose " + named + " (named in the experiment): " + probe.message);
    return choice;
  }
  const std::vector<std::string> order = automatic_order(host, e);
  for (const std::string& name : order) {
    BackendHandle* b = host.backend(name);
    if (!b) {
      choice.reasons.push_back("skipped " + name + ": no such backend plugin loaded");
      continue;
    }
    if (const Status may = allowed(*b, e, limits); !may) {
      choice.reasons.push_back("skipped " + name + ": " + may.why_not());
      continue;
    }
    const ProbeResult& probe = b->probe();
    if (!probe.usable()) {
      choice.reasons.push_back("skipped " + name + ": " + probe_reason(probe));
      continue;
    }
    if (probe.avoid_in_auto && !listed(e.backend.force, name)) {
      choice.reasons.push_back("skipped " + name + ": usable, but " + *probe.avoid_in_auto);
      continue;
    }
    choice.backend = b;
    choice.reasons.push_back("chose " + name + " (first usable in order " + join(order) + "): " + probe.message);
    return choice;
  }
  throw Error("no usable backend" + (choice.reasons.empty() ? std::string() : "; " + join(choice.reasons, "; ")));
}

}  // namespace plugtrain
