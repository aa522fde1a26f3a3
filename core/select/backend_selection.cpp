#include "select/backend_selection.h"

#include <algorithm>
#include <stdexcept>

#include "config/suggest.h"

namespace plugtrain {

namespace {

bool disabled(const Experiment& e, const std::string& name) {
  return std::find(e.disable.begin(), e.disable.end(), name) != e.disable.end();
}

std::string probe_reason(const ProbeResult& p) { return std::string(to_string(p.code)) + ": " + p.message; }

std::vector<std::string> backend_names(PluginHost& host) {
  std::vector<std::string> names;
  for (auto& b : host.backends()) names.push_back(b.name());
  return names;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s.empty() ? "none" : s;
}

}  // namespace

BackendChoice select_backend(PluginHost& host, const Experiment& e) {
  BackendChoice choice;
  if (e.backend != "auto") {
    BackendHandle* b = host.backend(e.backend);
    if (!b)
      throw std::runtime_error("backend '" + e.backend + "' is not among the loaded backend plugins" +
                               did_you_mean(e.backend, backend_names(host)) + "; loaded: " +
                               joined(backend_names(host)) + " (see `plugtrain plugins`)");
    if (disabled(e, e.backend))
      throw std::runtime_error("backend '" + e.backend + "' is named in [backend] name but also disabled");
    const ProbeResult& probe = b->probe();
    if (!probe.usable())
      throw std::runtime_error("backend '" + e.backend + "' is unusable: " + probe_reason(probe));
    choice.backend = b;
    choice.reasons.push_back("chose " + e.backend + " (named in the experiment): " + probe.message);
    return choice;
  }
  for (const std::string& name : e.prefer) {
    if (disabled(e, name)) {
      choice.reasons.push_back("skipped " + name + ": disabled");
      continue;
    }
    BackendHandle* b = host.backend(name);
    if (!b) {
      choice.reasons.push_back("skipped " + name + ": no such backend plugin loaded");
      continue;
    }
    const ProbeResult& probe = b->probe();
    if (!probe.usable()) {
      choice.reasons.push_back("skipped " + name + ": " + probe_reason(probe));
      continue;
    }
    if (probe.avoid_in_auto && !(name == "mps" && e.force_mps)) {
      choice.reasons.push_back("skipped " + name + ": usable, but " + *probe.avoid_in_auto);
      continue;
    }
    choice.backend = b;
    choice.reasons.push_back("chose " + name + " (first usable in order " + joined(e.prefer) + "): " + probe.message);
    return choice;
  }
  std::string why;
  for (const auto& r : choice.reasons) why += "; " + r;
  throw std::runtime_error("no usable backend" + why);
}

}  // namespace plugtrain
