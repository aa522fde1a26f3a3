#include "describe/plugins_report.h"

#include <algorithm>
#include <sstream>

#include "plugins/plugin_loader.h"
#include "plugtrain/abi.h"
#include "util/format.h"
#include "util/text.h"
#include "version.h"

namespace plugtrain {

namespace {

// Status as a user reads it: usable / unusable: reason / refused: reason / shadowed: ...
struct StatusLine {
  std::string word;    // usable, unusable, loaded, refused, shadowed
  std::string reason;  // empty for usable / loaded
};

StatusLine status_of(PluginHost& host, const PluginRecord& record) {
  if (record.status != PluginStatus::loaded) return {to_string(record.status), record.reason};
  if (record.has_kind(PLUGTRAIN_KIND_BACKEND)) {
    BackendHandle* backend = host.backend(record.handshake.name);
    if (!backend) return {"refused", "backend object missing"};
    const ProbeResult& probe = backend->probe();
    if (probe.usable()) return {"usable", ""};
    return {"unusable", std::string(to_string(probe.code)) + ": " + probe.message};
  }
  return {"loaded", ""};
}

// The names a catalog holds from one plugin.
template <class Catalog>
std::vector<std::string> names_from(const Catalog& catalog, const std::string& plugin) {
  std::vector<std::string> names;
  for (const auto& entry : catalog.all())
    if (entry.plugin == plugin) names.push_back(entry.spec.name);
  return names;
}

std::string device_line(const DeviceInfo& d, const std::string& type) {
  std::ostringstream out;
  out << "      " << type << ":" << d.index << "  " << d.name;
  if (!d.capability.empty()) out << "  [" << d.capability << "]";
  out << "  memory " << format_bytes(d.total_memory_bytes) << " total, "
      << format_bytes(d.free_memory_bytes, "unknowable") << " free";
  for (const auto& [k, v] : d.details) out << ", " << k << " " << v;
  return out.str();
}

std::string pad(const std::string& s, std::size_t width) {
  return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
}

nlohmann::json optional_bytes(const std::optional<std::uint64_t>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

std::string plugins_table(PluginHost& host) {
  std::ostringstream out;
  out << "Plugin search order (first plugin of a name wins):\n";
  int i = 1;
  for (const auto& root : host.search_roots()) {
    const std::string note = !root.ignored.empty() ? ", ignored: " + root.ignored : root.exists ? "" : ", not found";
    out << "  " << i++ << ". " << root.path.string() << "  (" << root.origin << note << ")\n";
  }
  out << "\n";
  if (host.plugins().empty()) {
    out << "No plugin files found.\n";
    return out.str();
  }
  const std::size_t wname = 12, wkind = 9, wver = 9;  // a longer kind list pushes the row on
  out << pad("NAME", wname) << pad("KIND", wkind) << pad("VERSION", wver) << "STATUS\n";
  for (const auto& record : host.plugins()) {
    StatusLine status = status_of(host, record);
    out << pad(record.display_name(), wname) << pad(record.has_handshake ? record.handshake.kind : "-", wkind)
        << pad(record.has_handshake ? record.handshake.version : "-", wver) << status.word;
    if (!status.reason.empty()) out << ": " << status.reason;
    out << "\n      file " << record.path.string() << "\n";
    if (!record.warning.empty()) out << "      warning: loaded although " << record.warning << "\n";
    if (status.word == "usable" || status.word == "unusable") {
      BackendHandle* backend = host.backend(record.handshake.name);
      std::string type = backend->name();
      try { type = backend->capabilities().device_type; } catch (const std::exception&) {}
      for (const auto& d : backend->probe().devices) out << device_line(d, type) << "\n";
    }
    if (record.has_kind(PLUGTRAIN_KIND_MODELS) && record.status == PluginStatus::loaded) {
      std::vector<std::string> names;
      for (const auto& m : host.models().all())
        if (m.plugin == record.handshake.name) names.push_back(m.spec.name);
      out << "      models " << join(names, ", ", "(none)") << "\n";
    }
    if (record.status == PluginStatus::loaded) {
      const std::string& plugin = record.handshake.name;
      if (record.has_kind(PLUGTRAIN_KIND_DATASETS))
        out << "      data sets " << join(names_from(host.datasets(), plugin), ", ", "(none)") << "\n";
      if (record.has_kind(PLUGTRAIN_KIND_TASKS))
        out << "      tasks " << join(names_from(host.tasks(), plugin), ", ", "(none)") << "\n";
      if (record.has_kind(PLUGTRAIN_KIND_LOGGERS))
        out << "      loggers " << join(names_from(host.loggers(), plugin), ", ", "(none)") << "\n";
    }
  }
  return out.str();
}

nlohmann::json plugins_json(PluginHost& host) {
  nlohmann::json j;
  j["plugtrain"] = PLUGTRAIN_VERSION;
  j["libtorch"] = host_torch_version();
  j["sdk_abi"] = std::to_string(PLUGTRAIN_SDK_ABI_MAJOR) + "." + std::to_string(PLUGTRAIN_SDK_ABI_MINOR);
  j["search_path"] = nlohmann::json::array();
  for (const auto& root : host.search_roots())
    j["search_path"].push_back(
        {{"path", root.path.string()}, {"origin", root.origin}, {"exists", root.exists}, {"ignored", root.ignored}});
  j["plugins"] = nlohmann::json::array();
  for (const auto& record : host.plugins()) {
    StatusLine status = status_of(host, record);
    nlohmann::json p;
    p["file"] = record.path.string();
    p["origin"] = record.origin;
    p["status"] = status.word;
    p["reason"] = status.reason;
    if (!record.warning.empty()) p["warning"] = record.warning;
    p["name"] = record.display_name();
    if (record.has_handshake) {
      const auto& h = record.handshake;
      p["kind"] = h.kind;  // the kinds' names, "models,datasets"
      p["version"] = h.version;
      p["description"] = h.description;
      p["sdk_abi"] = std::to_string(h.abi_major) + "." + std::to_string(h.abi_minor);
      p["libtorch"] = h.torch_version;
      p["cxx_abi"] = h.cxx_abi;
      p["compiler"] = h.compiler;
    }
    if (status.word == "usable" || status.word == "unusable") {
      BackendHandle* backend = host.backend(record.handshake.name);
      const ProbeResult& probe = backend->probe();
      nlohmann::json devices = nlohmann::json::array();
      for (const auto& d : probe.devices)
        devices.push_back({{"index", d.index},
                           {"name", d.name},
                           {"capability", d.capability},
                           {"total_memory_bytes", optional_bytes(d.total_memory_bytes)},
                           {"free_memory_bytes", optional_bytes(d.free_memory_bytes)},
                           {"details", d.details}});
      p["probe"] = {{"code", to_string(probe.code)}, {"message", probe.message}, {"devices", devices}};
      try {
        const Capabilities& c = backend->capabilities();
        nlohmann::json strategies = nlohmann::json::array();
        for (Strategy s : c.strategies) strategies.push_back(to_string(s));
        p["capabilities"] = {{"device_type", c.device_type}, {"host_cpu", c.host_cpu},     {"float64", c.float64},
                             {"priority", c.priority},       {"strategies", strategies}, {"collective", c.collective}};
      } catch (const std::exception& e) {
        p["capabilities"] = {{"error", e.what()}};
      }
    }
    const std::string& plugin = record.handshake.name;
    if (record.has_kind(PLUGTRAIN_KIND_MODELS) && record.status == PluginStatus::loaded)
      p["models"] = names_from(host.models(), plugin);
    if (record.status == PluginStatus::loaded && record.has_kind(PLUGTRAIN_KIND_MODELS | PLUGTRAIN_KIND_DATASETS | PLUGTRAIN_KIND_TASKS)) {
      p["datasets"] = names_from(host.datasets(), plugin);
      p["tasks"] = names_from(host.tasks(), plugin);
    }
    if (record.status == PluginStatus::loaded && record.has_kind(PLUGTRAIN_KIND_LOGGERS))
      p["loggers"] = names_from(host.loggers(), plugin);
    j["plugins"].push_back(p);
  }
  return j;
}

}  // namespace plugtrain
