#include "plugins/plugin_host.h"

#include <cstring>
#include <map>
#include <mutex>
#include <optional>

#include <c10/core/DeviceType.h>

#include "config/option_rules.h"
#include "plugins/plugin_error.h"
#include "plugins/plugin_kinds.h"
#include "plugins/plugin_loader.h"
#include "plugins/plugin_permissions.h"
#include "plugins/staging_registrar.h"
#include "util/result.h"

namespace plugtrain {


PluginHost::PluginHost(const SearchOptions& options) : roots_(plugin_search_roots(options)) {
  std::map<std::string, std::string> first_by_name;  // plugin name -> file that won
  for (const auto& candidate : find_plugin_candidates(roots_)) {
    OpenedPlugin opened = open_plugin(candidate, options.allow_insecure);
    PluginRecord& record = records_.emplace_back(std::move(opened.record));
    if (!record.warning.empty())
      warn_insecure_plugin(record.path,
                           "--allow-insecure-plugins: loading " + record.path.string() + " although " + record.warning);
    if (opened.library.is_loaded()) retain_until_exit(opened.library);
    if (record.status != PluginStatus::loaded) continue;

    if (auto earlier = first_by_name.find(record.handshake.name); earlier != first_by_name.end()) {
      record.status = PluginStatus::shadowed;
      record.reason = "shadowed by " + earlier->second + " (same name, found earlier)";
      continue;
    }
    if (!run_init_hook(record, opened.library)) continue;
    import_registration(record, opened.library);
    // Only a plugin that really imported takes the name: a broken one shadows nothing.
    if (record.status == PluginStatus::loaded) first_by_name.emplace(record.handshake.name, record.path.string());
  }
}

namespace {

bool mentions_privateuse1(const std::string& text) {
  return text.find("PrivateUse1") != std::string::npos || text.find("privateuse1") != std::string::npos;
}

// The optional lifecycle hooks (abi.h), once per plugin file and process however many hosts a process
// makes (a sweep or `bench` makes several): init when it is first loaded, its answer
// remembered; shutdown at the process's normal end, newest first, after every host and the
// plugin objects they own are gone. Plugin libraries are never unloaded, so the hooks stay
// callable until then.
class PluginLifecycle {
 public:
  static PluginLifecycle& instance() {
    static PluginLifecycle lifecycle;
    return lifecycle;
  }
  // Whether the plugin can work; init runs the first time only.
  Status init(const PluginRecord& record, boost::dll::shared_library& library) {
    const std::lock_guard<std::mutex> lock(mutex_);
    const std::string key = record.path.string();
    if (auto done = init_results_.find(key); done != init_results_.end()) return done->second;
    Status ready;
    const bool privateuse1_taken = c10::is_privateuse1_backend_registered();
    try {
      if (library.has(PLUGTRAIN_INIT_SYMBOL)) {
        auto init = library.get<const char*()>(PLUGTRAIN_INIT_SYMBOL);
        if (const char* refusal = call_plugin(record.handshake.name, "init", init))
          ready = WhyNot{PluginError(record.handshake.name, std::string("init: ") + refusal).what()};
      }
    } catch (const std::exception& e) {
      ready = WhyNot{e.what()};
    }
    // A device LibTorch does not know comes as PrivateUse1, and a process has one: name the
    // plugin that holds it when another one cannot have it.
    if (!privateuse1_taken && c10::is_privateuse1_backend_registered()) privateuse1_owner_ = record.handshake.name;
    if (!ready && privateuse1_owner_ && mentions_privateuse1(ready.why_not()))
      ready = WhyNot{ready.why_not() + " (plugin '" + *privateuse1_owner_ + "' registered PrivateUse1 as '" +
                     c10::get_privateuse1_backend() + "' first)"};
    if (ready && library.has(PLUGTRAIN_SHUTDOWN_SYMBOL))
      shutdowns_.emplace_back(record.handshake.name, library.get<void()>(PLUGTRAIN_SHUTDOWN_SYMBOL));
    init_results_.emplace(key, ready);
    return ready;
  }
  ~PluginLifecycle() {
    for (auto it = shutdowns_.rbegin(); it != shutdowns_.rend(); ++it) {
      try {
        call_plugin(it->first, "shutdown", it->second);
      } catch (const std::exception&) {
        // The process is ending: nothing is left to tell about a plugin that could not clean up.
      }
    }
  }

 private:
  std::mutex mutex_;
  std::map<std::string, Status> init_results_;                                   // file -> its answer
  std::optional<std::string> privateuse1_owner_;                                 // the plugin whose init registered it
  std::vector<std::pair<std::string, plugtrain_plugin_shutdown_fn>> shutdowns_;  // plugin, hook
};

}  // namespace

bool PluginHost::run_init_hook(PluginRecord& record, boost::dll::shared_library& library) {
  const Status ready = PluginLifecycle::instance().init(record, library);
  if (ready) return true;
  record.status = PluginStatus::refused;
  record.reason = ready.why_not();
  return false;
}

namespace {

template <class Entries, class Catalog>
void adopt(Entries entries, const std::string& plugin, Catalog& catalog) {
  for (auto& entry : entries) {
    entry.plugin = plugin;
    catalog.add(std::move(entry));
  }
}

// Whether what the registration gave is what the handshake named, in one line if not.
Status kinds_match(std::uint32_t named, std::uint32_t given) {
  if (given == 0) return WhyNot{"its registration gives nothing (the handshake names " + kind_names(named, ", ") + ")"};
  for (const PluginKind& k : kPluginKinds) {
    if ((given & k.bit) && !(named & k.bit))
      return WhyNot{"its registration gives " + std::string(k.one) + ", but its handshake names only " + kind_names(named, ", ")};
    if ((named & k.bit) && !(given & k.bit))
      return WhyNot{"its handshake names " + std::string(k.name) + ", but its registration gives none"};
  }
  return Status::fine();
}

}  // namespace

// The plugin's one registration (plugin.h), staged: nothing of a plugin that fails reaches the host.
void PluginHost::import_registration(PluginRecord& record, boost::dll::shared_library& library) {
  const std::string& name = record.handshake.name;
  if (!library.has("plugtrain_register")) {
    record.status = PluginStatus::refused;
    record.reason = "it exports no plugtrain_register (use PLUGTRAIN_PLUGIN or PLUGTRAIN_BACKEND_PLUGIN)";
    return;
  }
  try {
    auto& register_fn = library.get_alias<void(Registrar&)>("plugtrain_register");
    StagingRegistrar staging;
    call_plugin(name, "register", [&] { register_fn(staging); });
    if (Status fit = staging.all_fit(); !fit) throw PluginError(name, fit.why_not());
    if (Status match = kinds_match(record.handshake.kinds, staging.kinds_given()); !match)
      throw PluginError(name, match.why_not());
    if (staging.backend) backends_.emplace_back(name, std::move(staging.backend), record.path.string());
    adopt(staging.models(), name, models_);
    adopt(staging.datasets(), name, datasets_);
    adopt(staging.tasks(), name, tasks_);
    adopt(staging.loggers(), name, loggers_);
  } catch (const std::exception& e) {
    record.status = PluginStatus::refused;
    record.reason = e.what();
  }
}

namespace {

bool has_kind_named(const PluginRecord& record, const std::string& kind) {
  for (const PluginKind& k : kPluginKinds)
    if (kind == k.name) return record.has_kind(k.bit);
  return false;
}

}  // namespace

std::vector<std::string> PluginHost::load_failures(const std::string& kind, const std::string& name) const {
  std::vector<std::string> failures;
  for (const PluginRecord& r : records_)
    if (r.status == PluginStatus::refused && r.has_handshake && has_kind_named(r, kind) &&
        (name.empty() || r.handshake.name == name))
      failures.push_back("plugin '" + r.display_name() + "' (" + r.path.string() + ") did not load: " + r.reason);
  // A file refused before its handshake could be read (a missing library, a file others
  // could write) has no name yet: plugtrain_add_plugin names it plugtrain_<kind>_<name>, so go by that.
  if (!name.empty())
    for (const PluginRecord& r : records_)
      if (r.status == PluginStatus::refused && !r.has_handshake &&
          r.path.stem().string() == "plugtrain_" + kind + "_" + name)
        failures.push_back("its plugin file " + r.path.string() + " did not load: " + r.reason);
  return failures;
}

BackendHandle* PluginHost::backend(const std::string& name) {
  for (auto& b : backends_)
    if (b.name() == name) return &b;
  return nullptr;
}

}  // namespace plugtrain
