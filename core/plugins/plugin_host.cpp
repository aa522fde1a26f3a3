#include "plugins/plugin_host.h"

#include <cstring>
#include <map>
#include <mutex>
#include <optional>

#include <c10/core/DeviceType.h>

#include "config/option_rules.h"
#include "plugins/plugin_error.h"
#include "plugins/plugin_loader.h"
#include "plugins/staging_registries.h"
#include "util/result.h"

namespace plugtrain {


PluginHost::PluginHost(const SearchOptions& options) : roots_(plugin_search_roots(options)) {
  std::map<std::string, std::string> first_by_name;  // plugin name -> file that won
  for (const auto& candidate : find_plugin_candidates(roots_)) {
    OpenedPlugin opened = open_plugin(candidate);
    PluginRecord& record = records_.emplace_back(std::move(opened.record));
    if (opened.library.is_loaded()) retain_until_exit(opened.library);
    if (record.status != PluginStatus::loaded) continue;

    if (auto earlier = first_by_name.find(record.handshake.name); earlier != first_by_name.end()) {
      record.status = PluginStatus::shadowed;
      record.reason = "shadowed by " + earlier->second + " (same name, found earlier)";
      continue;
    }
    if (!run_init_hook(record, opened.library)) continue;
    if (record.handshake.kind == "backend")
      import_backend(record, opened.library);
    else
      import_registrations(record, opened.library);
    // Only a plugin that really imported takes the name: a broken one shadows nothing.
    if (record.status == PluginStatus::loaded) first_by_name.emplace(record.handshake.name, record.path.string());
  }
}

namespace {

bool mentions_privateuse1(const std::string& text) {
  return text.find("PrivateUse1") != std::string::npos || text.find("privateuse1") != std::string::npos;
}

// SDK 3.2's optional hooks, once per plugin file and process however many hosts a process
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

void PluginHost::import_backend(PluginRecord& record, boost::dll::shared_library& library) {
  const std::string& name = record.handshake.name;
  if (!library.has("plugtrain_create_backend")) {
    record.status = PluginStatus::refused;
    record.reason = "backend plugin exports no plugtrain_create_backend (use PLUGTRAIN_BACKEND_PLUGIN)";
    return;
  }
  try {
    auto& create = library.get_alias<std::unique_ptr<Backend>()>("plugtrain_create_backend");
    std::unique_ptr<Backend> backend = call_plugin(name, "create_backend", create);
    if (!backend) throw PluginError(name, "create_backend returned nothing");
    // SDK 2.1: a plugin may bring its own collective for ddp (plugtrain/collective.h).
    CreateCollective* create_collective = nullptr;
    if (library.has("plugtrain_create_collective"))
      create_collective = &library.get_alias<CreateCollective>("plugtrain_create_collective");
    backends_.emplace_back(name, std::move(backend), create_collective, record.handshake.abi_minor,
                           record.path.string());
  } catch (const std::exception& e) {
    record.status = PluginStatus::refused;
    record.reason = e.what();
  }
}

namespace {

// The export each kind of plugin must have, and the macro that makes it.
struct RequiredExport {
  const char* symbol;
  const char* macro;
};

RequiredExport required_export(const std::string& kind) {
  if (kind == "models") return {"plugtrain_register_models", "PLUGTRAIN_MODELS_PLUGIN"};
  if (kind == "datasets") return {"plugtrain_register_datasets", "PLUGTRAIN_DATASETS_PLUGIN"};
  return {"plugtrain_register_tasks", "PLUGTRAIN_TASKS_PLUGIN"};
}

// Calls the plugin's register function `symbol` with `staging`, if it exports one.
template <class Registry, class Staging>
void register_with(const std::string& plugin, boost::dll::shared_library& library, const char* symbol, Staging& staging) {
  if (!library.has(symbol)) return;
  auto& register_fn = library.get_alias<void(Registry&)>(symbol);
  const char* call = symbol + std::strlen("plugtrain_");  // "register_models": what the plugin's author wrote
  call_plugin(plugin, call, [&] { register_fn(staging); });
  if (!staging.all_fit) throw PluginError(plugin, staging.all_fit.why_not());
}

template <class Entries, class Catalog>
void adopt(Entries& entries, const std::string& plugin, Catalog& catalog) {
  for (auto& entry : entries) {
    entry.plugin = plugin;
    catalog.add(std::move(entry));
  }
}

}  // namespace

// A models plugin (its models; since SDK 3.5 its data sets; since 3.6 its tasks), a data-sets
// plugin (3.5) or a tasks plugin (3.6): each registers what it has, its kind's export at least.
void PluginHost::import_registrations(PluginRecord& record, boost::dll::shared_library& library) {
  const std::string& name = record.handshake.name;
  const RequiredExport required = required_export(record.handshake.kind);
  if (record.handshake.kind == "tasks" && record.handshake.abi_minor < 6) {
    record.status = PluginStatus::refused;
    record.reason = "a tasks plugin needs SDK 3.6 or newer (it says 3." + std::to_string(record.handshake.abi_minor) + ")";
    return;
  }
  if (!library.has(required.symbol)) {
    record.status = PluginStatus::refused;
    record.reason = record.handshake.kind + " plugin exports no " + required.symbol + " (use " + required.macro + ")";
    return;
  }
  try {
    StagingModels models;
    register_with<ModelRegistry>(name, library, "plugtrain_register_models", models);
    // An older plugin cannot export what its SDK did not have.
    StagingDatasets datasets;
    if (record.handshake.abi_minor >= 5) register_with<DatasetRegistry>(name, library, "plugtrain_register_datasets", datasets);
    StagingTasks tasks;
    if (record.handshake.abi_minor >= 6) register_with<TaskRegistry>(name, library, "plugtrain_register_tasks", tasks);
    for (RegisteredModel& m : models.models) m.sdk_minor = record.handshake.abi_minor;
    adopt(models.models, name, models_);
    adopt(datasets.datasets, name, datasets_);
    for (RegisteredTask& t : tasks.tasks) t.sdk_minor = record.handshake.abi_minor;
    adopt(tasks.tasks, name, tasks_);
  } catch (const std::exception& e) {
    record.status = PluginStatus::refused;
    record.reason = e.what();
  }
}

std::vector<std::string> PluginHost::load_failures(const std::string& kind, const std::string& name) const {
  std::vector<std::string> failures;
  for (const PluginRecord& r : records_)
    if (r.status == PluginStatus::refused && r.has_handshake && r.handshake.kind == kind &&
        (name.empty() || r.handshake.name == name))
      failures.push_back("plugin '" + r.display_name() + "' (" + r.path.string() + ") did not load: " + r.reason);
  // A file refused before its handshake could be read (a missing library, a world-writable
  // file) has no name yet: plugtrain_add_plugin names it plugtrain_<kind>_<name>, so go by that.
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
